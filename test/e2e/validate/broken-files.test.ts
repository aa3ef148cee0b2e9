// Several broken agent files at once: `agent-iac validate` and a real `pulumi preview` both name
// every file, line and field, and nothing reaches the service.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../../../src/simulator/index.ts";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { runCli } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, simulatorCall } from "../../helpers/simulator.ts";

const API_KEY = "sk-test-broken-3e71a09c5b2d4f88";

const FILES: Record<string, string> = {
  // A valid agent the others sit beside (and the target the dangling reference misspells).
  "call-summary.yaml": `kind: procedural
name: Call summary
description: Summarizes calls.
config:
  runtime:
    model: openai/gpt-4o-mini
    prompt: {type: fixed, text: Summarize the call.}
`,
  "syntax.yaml": `kind: procedural
name: [Call summary
description: Summarizes calls.
config: {}
`,
  "wrong-type.yaml": `kind: procedural
name: [Call, summary]
description: Summarizes calls.
config:
  runtime:
    model: openai/gpt-4o-mini
    prompt: {type: fixed, text: Summarize the call.}
`,
  "typo.yaml": `kind: procedural
name: QA scorer
descripton: Scores calls.
config:
  runtime:
    model: openai/gpt-4o
    prompt: {type: fixed, text: Score the call.}
`,
  "bad-model.yaml": `kind: conversational
name: Support
description: Support line.
config:
  runtime:
    model: gpt-4o
    prompt: {type: fixed, text: You answer the support line.}
`,
  "dangling.yaml": `kind: conversational
name: Booking
description: Books appointments.
config:
  runtime:
    model: openai/gpt-4o
    prompt: {type: fixed, text: You book appointments.}
postprocess_agents: [call-sumary]
`,
  "missing-prompt.yaml": `kind: procedural
name: Follow-up
description: Drafts follow-ups.
config:
  runtime:
    model: openai/gpt-4o-mini
    prompt: {type: fixed, file: ../prompts/does-not-exist.md}
`,
};

/** One `file:line:column: field:` prefix per broken file (the reasons are checked loosely). */
const EXPECTED: [prefix: string, reason: RegExp][] = [
  ["agents/syntax.yaml:3:1: ", /YAML: .*\]/],
  ["agents/wrong-type.yaml:2:7: name: ", /expected string/],
  ["agents/typo.yaml:3:1: descripton: ", /unknown key "descripton" \(did you mean "description"\?\)/],
  ["agents/bad-model.yaml:6:12: config.runtime.model: ", /<vendor>\/<model name>/],
  ["agents/dangling.yaml:8:22: postprocess_agents[0]: ", /unknown agent "call-sumary".*did you mean "call-summary"/],
  ["agents/missing-prompt.yaml:7:33: config.runtime.prompt.file: ", /does-not-exist\.md does not exist/],
];

function expectEveryError(text: string) {
  const lines = text.split("\n").map((line) => line.trim());
  for (const [prefix, reason] of EXPECTED) {
    const line = lines.find((l) => l.startsWith(prefix));
    expect(line, `a line starting with ${prefix}`).toBeDefined();
    expect(line?.slice(prefix.length)).toMatch(reason);
  }
  expect(text).not.toContain("call-summary.yaml:");
}

describe("several broken agent files at once", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let project: AgentsProject;
  let source: string;

  beforeAll(async () => {
    source = await mkdtemp(path.join(os.tmpdir(), "agent-iac-broken-"));
    await mkdir(path.join(source, "agents"));
    for (const [name, text] of Object.entries(FILES)) await writeFile(path.join(source, "agents", name), text);
    sandbox = await pulumiSandbox();
    sim = await startSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, {
      baseUrl: sim.url,
      apiKey: API_KEY,
      secretKey: true,
      agentsFrom: path.join(source, "agents"),
    });
    await simulatorCall(sim, "POST", "/_simulator/reset");
  });
  afterAll(async () => {
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
    if (source) await rm(source, { recursive: true, force: true });
  });

  it("`agent-iac validate <dir>` exits 1 naming each file, line and field", async () => {
    const failure = await runCli(["validate", "agents"], { cwd: project.dir });
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe("");
    expectEveryError(failure?.stderr ?? "");
    expect(failure?.stderr).toMatch(/^\d+ errors in agents$/m);
  });

  it("`pulumi preview` fails naming each file, line and field, and sends nothing to the service", async () => {
    const output: string[] = [];
    const failure = await project.stack
      .preview({ onOutput: (out) => output.push(out), onError: (err) => output.push(err) })
      .then(
        () => undefined,
        (error: Error) => error,
      );
    expect(failure, "the preview must fail").toBeInstanceOf(Error);
    expectEveryError(failure?.message ?? "");
    // The program's failure is our list of problems, not a stack trace.
    expect(failure?.message).toMatch(/\d+ error\(s\) in agents:/);
    expect(failure?.message).not.toMatch(/\n\s+at .*\.ts:\d+:\d+/);
    expect(`${failure?.message}\n${output.join("")}`).not.toContain(API_KEY);
    expect(await requestCounts(sim)).toMatchObject({ count: 0 });
  });
});
