// `judge check`'s `votes:` where docs/judge.md lists it — beside an item's rubric, transcript and
// human label — as well as at the top of the file (the default for every item). Counted by the
// requests a real scripted judge on port 0 receives.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInProcess } from "../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../helpers/judge-server.ts";

describe("judge check votes", () => {
  let judge: TestJudge;
  let dir: string;
  beforeAll(async () => {
    judge = await startTestJudge({ greets: [{ verdict: "pass" }], thanks: [{ verdict: "fail" }] });
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-judge-votes-"));
  });
  afterAll(async () => {
    await judge.close();
    await rm(dir, { recursive: true, force: true });
  });

  const check = async (name: string, lines: string[]) => {
    await writeFile(path.join(dir, name), `${lines.join("\n")}\n`);
    const before = judge.requests.length;
    const result = await runInProcess(["judge", "check", name, "--no-judge-cache"], {
      cwd: dir,
      env: {
        ...process.env,
        AGENT_IAC_JUDGE_BASE_URL: judge.url,
        AGENT_IAC_JUDGE_MODEL: "test-model",
        AGENT_IAC_JUDGE_API_KEY: "sk-judge-votes-test",
      },
    });
    return { ...result, requests: judge.requests.length - before };
  };

  it("takes votes on an item (nested, as the docs put it), over the file's default", async () => {
    const run = await check("nested.yaml", [
      "items:",
      '  - rubric: "greets the caller"',
      '    transcript: ["agent: Hello, Northwind."]',
      "    human: pass",
      "    votes: 5",
      '  - rubric: "thanks the caller"',
      '    transcript: ["agent: Bye."]',
      "    human: fail",
    ]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    // 5 for the first item, the default 3 for the second.
    expect(run.requests).toBe(8);
  });

  it("takes votes at the top level for every item, and an item's own over it", async () => {
    const run = await check("top.yaml", [
      "votes: 1",
      "items:",
      '  - { rubric: "greets the caller", transcript: ["agent: Hello."], human: pass }',
      '  - { rubric: "thanks the caller", transcript: ["agent: Bye."], human: fail, votes: 3 }',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.requests).toBe(4);
  });

  it("refuses an even number of votes on an item at its file:line (exit 2)", async () => {
    const run = await check("even.yaml", [
      "items:",
      '  - rubric: "greets the caller"',
      '    transcript: ["agent: Hello."]',
      "    human: pass",
      "    votes: 2",
    ]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("even.yaml:5: items.0.votes: must be odd");
    expect(run.requests).toBe(0);
  });
});
