// Generated agent files for tests and benchmarks: `count` procedural agents and as many
// conversational agents, each conversational agent linking one procedural agent (two levels).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

export function proceduralKey(i: number): string {
  return `scorer-${String(i).padStart(3, "0")}`;
}

export function conversationalKey(i: number): string {
  return `line-${String(i).padStart(3, "0")}`;
}

export async function writeGeneratedAgents(
  dir: string,
  count: number,
  options: { smoke?: boolean } = {},
): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (let i = 0; i < count; i++) {
    await writeFile(
      path.join(dir, `${proceduralKey(i)}.yaml`),
      [
        "kind: procedural",
        `name: Scorer ${i}`,
        "description: Scores each call after it ends.",
        "config:",
        "  filter_statuses: [completed]",
        "  runtime:",
        "    model: openai/gpt-4o-mini",
        "    reasoning_effort: medium",
        `    prompt: {type: fixed, text: "Score call quality from 1 to 5 (scorer ${i})."}`,
        "",
      ].join("\n"),
    );
    await writeFile(
      path.join(dir, `${conversationalKey(i)}.yaml`),
      [
        "kind: conversational",
        `name: Line ${i}`,
        "description: Answers the support line.",
        "config:",
        "  personas:",
        `    - {name: Agent ${i}, voice: {id: female-1, provider: service}}`,
        "  runtime:",
        "    model: openai/gpt-4o",
        `    prompt: {type: fixed, text: "You answer support line ${i}. Be brief."}`,
        "  language: {default_language: English, supported_languages: [English]}",
        `postprocess_agents: [${proceduralKey(i)}]`,
        ...(options.smoke
          ? [
              "smoke:",
              "  - name: greets",
              "    channel: {callee_no: '+15550100'}",
              "    timeout: 60",
              "    expect:",
              `      says: ["this is Agent ${i}"]`,
            ]
          : []),
        "",
      ].join("\n"),
    );
  }
}
