// `agent-iac judge check` prints what an outside service said: the judge's reasons (and the labelled
// file's rubrics). On a terminal they are data, never control — the same rule as every other
// surface (README: "Text from the service is data"). A real CLI process against a scripted judge on port 0.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";

// A title change, a screen clear, a C1 CSI (0x9b) and a right-to-left override.
const HOSTILE = "fine\u001b]0;owned\u0007\u001b[2J\u009b31m\u202edetsurt";

describe("judge check on a terminal", () => {
  let judge: TestJudge;
  let dir: string;
  beforeAll(async () => {
    judge = await startTestJudge({ greets: [{ verdict: "pass", reason: HOSTILE }] });
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-judge-check-"));
  });
  afterAll(async () => {
    await judge.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("shows the judge's reason and the rubric escaped, with no control character", async () => {
    await writeFile(
      path.join(dir, "labels.yaml"),
      [
        "items:",
        `  - { rubric: "greets the caller \\u202e", human: pass, transcript: ["agent: Hello, Northwind."] }`,
      ].join("\n"),
    );
    const result = await runCli(["judge", "check", "labels.yaml", "--judge-cache", path.join(dir, "cache")], {
      cwd: dir,
      env: {
        ...process.env,
        AGENT_IAC_JUDGE_BASE_URL: judge.url,
        AGENT_IAC_JUDGE_MODEL: "test-model",
        AGENT_IAC_JUDGE_API_KEY: "sk-judge-check-terminal",
      },
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(judge.requests.length).toBeGreaterThan(0);
    // The judge's words arrive, escaped.
    expect(result.stdout).toContain("fine\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202edetsurt");
    expect(result.stdout).toContain('"greets the caller \\u202e"');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the point is that none reaches the terminal
    expect(result.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });
});
