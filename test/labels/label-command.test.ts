// `judge label`'s flags and refusals, in-process: what it says before it serves anything.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/cli.ts";
import { judgedReport } from "./fixture.ts";

describe("judge label, before it serves", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-label-cmd-"));
    await writeFile(
      path.join(dir, "report.json"),
      JSON.stringify(judgedReport([{ rubric: "greets", verdict: "pass", transcript: ["agent: Hi."] }])),
    );
    await writeFile(path.join(dir, "empty.json"), JSON.stringify(judgedReport([])));
    await writeFile(path.join(dir, "call.jsonl"), '{"event":"message.created"}\n');
    await writeFile(path.join(dir, "broken.yaml"), "items:\n  - rubric: greets\n    human: maybe\n");
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const label = (...args: string[]) => runInProcess(["judge", "label", ...args], { cwd: dir, env: process.env });

  it("refuses a sample of fewer than 2 (one item cannot hold both verdicts), exit 2", async () => {
    const run = await label("report.json", "--sample", "1");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--sample must be a whole number from 2");
  });

  it("says a single recording holds no verdict and to give its directory, exit 2", async () => {
    const run = await label("call.jsonl");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("a single recording holds no verdict: give its directory");
    expect(run.stderr).toContain("directories of recordings (--record DIR)");
  });

  it("refuses a report without a judged expectation, exit 2", async () => {
    const run = await label("empty.json");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no judged expectation with a verdict to label");
  });

  it("says, without naming it, when the judge gave every item one verdict; Ctrl+C ends it with 130", async () => {
    const run = await runInProcess(["judge", "label", "report.json", "--labels", "one.yaml"], {
      cwd: dir,
      env: process.env,
      onWrite: (text, io) => {
        if (text.includes("press Ctrl+C")) io.signal("SIGINT");
      },
    });
    expect(run.code).toBe(130);
    expect(run.stdout).toContain("note: the judge gave every one of these items the same verdict");
    expect(run.stdout).not.toMatch(/same verdict[^\n]*\b(pass|fail)\b/);
    expect(run.stdout).toContain("stopped (SIGINT); 0 answer(s) this run");
  });

  it("refuses a labels file judge check would refuse, at its file:line, exit 2", async () => {
    const run = await label("report.json", "--labels", "broken.yaml");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/broken\.yaml:3: items\.0\.human/);
  });
});
