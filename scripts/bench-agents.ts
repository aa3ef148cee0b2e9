// Generated fleets for the benchmark: `count` agents in pairs, each conversational agent linking
// one procedural agent (the two-level shape of real stacks), with configs the size of the
// examples in agents/ (a conversational body of about 1.3 KB, a procedural one of about 0.8 KB).
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

export const proceduralKey = (i: number) => `summary-${String(i).padStart(4, "0")}`;
export const conversationalKey = (i: number) => `line-${String(i).padStart(4, "0")}`;

const sentences = [
  "Greet the caller by the clinic's name and say who you are.",
  "Ask what the call is about before offering anything.",
  "Check availability before you promise a time, and read the time back.",
  "Never give medical advice; offer to book a visit instead.",
  "If the caller is upset, slow down, apologise once and offer a person.",
  "Close by repeating what was agreed and ask if there is anything else.",
];

/** The prompt of conversational agent `i`; `revision` > 0 appends a sentence (the one-agent change). */
export function linePrompt(i: number, revision = 0): string {
  const lines = [`You answer line ${i} of the Riverside clinics.`, ...sentences];
  if (revision > 0) lines.push(`Revision ${revision}: mention the new opening hours.`);
  return lines.join(" ");
}

function conversational(i: number): string {
  return [
    "kind: conversational",
    `name: Line ${i}`,
    `description: Books, moves and cancels appointments for clinic ${i} in English and Spanish.`,
    "config:",
    "  personas:",
    `    - {name: Agent ${i}, voice: {id: male-1, provider: service}}`,
    "  runtime:",
    "    model: anthropic/claude-sonnet-4",
    `    prompt: {type: fixed, text: ${JSON.stringify(linePrompt(i))}}`,
    "    variables:",
    "      - {name: clinic_name, description: The clinic's name as the caller knows it., default_value: Riverside Dental}",
    "      - {name: opening_hours, description: Opening hours read out to callers., default_value: Monday to Friday 8 to 6}",
    "  tool:",
    "    tools:",
    "      - {ns: syscall, name: check_availability}",
    "      - {ns: syscall, name: book_appointment}",
    `    transfers: [{id: "+1555014${String(i % 10_000).padStart(4, "0")}"}]`,
    "  language: {default_language: English, supported_languages: [English, Spanish]}",
    "  channel: {is_voicemail_enabled: true}",
    `postprocess_agents: [${proceduralKey(i)}]`,
    "",
  ].join("\n");
}

function procedural(i: number): string {
  return [
    "kind: procedural",
    `name: Summary ${i}`,
    `description: Summarizes every completed call of line ${i} and posts the summary to the CRM hook.`,
    "config:",
    "  filter_statuses: [completed]",
    "  runtime:",
    "    model: openai/gpt-4o-mini",
    "    reasoning_effort: medium",
    `    prompt: {type: fixed, text: "Summarize the call on line ${i} for the support team in two or three sentences: why the customer called, what the agent did, and whether anything is still open."}`,
    "  output:",
    "    output_schema:",
    "      type: object",
    "      properties: {summary: {type: string}, follow_up_needed: {type: boolean}}",
    "      required: [summary, follow_up_needed]",
    `    post_url: http://127.0.0.1:8787/_simulator/hooks/summary-${i}`,
    "",
  ].join("\n");
}

/** Writes `count` agent files (count / 2 pairs; at least one procedural agent). */
export async function writeFleet(dir: string, count: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  const pairs = Math.floor(count / 2);
  for (let i = 0; i < pairs; i++) {
    await writeFile(path.join(dir, `${proceduralKey(i)}.yaml`), procedural(i));
    await writeFile(path.join(dir, `${conversationalKey(i)}.yaml`), conversational(i));
  }
  if (count % 2 === 1) await writeFile(path.join(dir, `${proceduralKey(pairs)}.yaml`), procedural(pairs));
}

/** The one-agent change: conversational agent 0's prompt gains a sentence. */
export async function changeOneAgent(dir: string, revision: number): Promise<void> {
  const file = path.join(dir, `${conversationalKey(0)}.yaml`);
  await writeFile(
    file,
    conversational(0).replace(JSON.stringify(linePrompt(0)), JSON.stringify(linePrompt(0, revision))),
  );
}
