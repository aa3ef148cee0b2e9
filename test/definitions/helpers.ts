// Temporary projects (agents/ + prompts/) for loader tests.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Diagnostic } from "../../src/definitions/index.ts";

export type TempProject = {
  root: string;
  agents: string;
  write(file: string, content: string | Uint8Array): Promise<void>;
  cleanup(): Promise<void>;
};

/** A project directory with `agents/` and `prompts/`; file paths are relative to the root. */
export async function tempProject(files: Record<string, string | Uint8Array> = {}): Promise<TempProject> {
  const root = await mkdtemp(path.join(os.tmpdir(), "agent-defs-"));
  const agents = path.join(root, "agents");
  await mkdir(agents);
  await mkdir(path.join(root, "prompts"));
  const write = async (file: string, content: string | Uint8Array) => {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  };
  for (const [file, content] of Object.entries(files)) await write(file, content);
  return { root, agents, write, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** `support.yaml:9:12: config.runtime.model` — a position independent of the temp directory. */
export function where(d: Diagnostic): string {
  return `${path.basename(d.file)}:${d.line}:${d.column}: ${d.field}`;
}

/** The shape every diagnostic must have, whatever the input. */
export function wellFormed(d: Diagnostic): boolean {
  return (
    typeof d.file === "string" &&
    d.file.length > 0 &&
    Number.isInteger(d.line) &&
    d.line >= 1 &&
    Number.isInteger(d.column) &&
    d.column >= 1 &&
    typeof d.field === "string" &&
    d.field.length > 0 &&
    typeof d.message === "string" &&
    d.message.length > 0
  );
}

export const SUMMARY = "kind: procedural\nname: Summary\ndescription: Summarizes calls.\nconfig: {}\n";

/** An agent file with one smoke scenario `s`, its extra lines (indented under the scenario) given. */
export const scenarioAgent = (scenario: string[]) =>
  [
    "kind: conversational",
    "name: Desk",
    "description: d",
    "config: {}",
    "smoke:",
    "  - name: s",
    '    channel: { callee_no: "+15550100100" }',
    ...scenario.map((line) => `    ${line}`),
  ].join("\n");
