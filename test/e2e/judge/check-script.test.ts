// The workflow's judge step (.github/scripts/judge-check.sh, issue 41's "the workflow runs judge
// check where a scenario needs it"): run as the workflow runs it, with the real CLI, the real
// Pulumi CLI, a real judge and a listening sink on loopback. It measures the judge only where a
// scenario sets a judge gate (judge_min_agreement, judge_min_kappa), refuses a missing labels file, and in a pull request that
// points agents:judgeBaseUrl elsewhere (in the stack file, a stackConfigDir copy or a project
// default) measures with the base's judge: the sink gets nothing, and no file is swapped.
import { execFile, execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../../src/workspace/index.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";

const SCRIPT = path.join(projectRoot, ".github", "scripts", "judge-check.sh");
const JUDGE_KEY = "sk-judge-check-script-key-7a1c";
const RUBRIC = "the agent introduces herself";
const SLOW = 180_000;

const stackFile = (judgeUrl: string) => `config:
  agents:judgeBaseUrl: ${judgeUrl}
  agents:judgeModel: test-model
`;
const LABELS = `items:
  - rubric: "${RUBRIC}"
    transcript: ["agent: Hello, this is Maya.", "user: Hi"]
    human: pass
  - rubric: "${RUBRIC}"
    transcript: ["agent: Maya here.", "user: Hi"]
    human: pass
`;

describe("the workflow's judge step (judge-check.sh: real CLI, Pulumi CLI, judge, sink)", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let judge: TestJudge;
  let dir: string;
  const sink = { url: "", requests: 0, close: async () => {} };

  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });
  const run = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        "bash",
        [SCRIPT, ...args],
        {
          cwd: dir,
          env: {
            ...process.env,
            ...sandbox.env,
            PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
            AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
            AGENT_IAC_JUDGE_CACHE_KEY: "judge-check-script-cache-key",
            AGENT_IAC_JUDGE_LABELS: "",
            NO_COLOR: "1",
            ...env,
          },
        },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, output: stdout + stderr }),
      );
    });

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    judge = await startTestJudge({ [RUBRIC]: [{ verdict: "pass", reason: "it does" }] }, { apiKey: JUDGE_KEY });
    const server = createServer((request, response) => {
      sink.requests++;
      request.resume();
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    // A project as a user's repository has it: the CLI in node_modules/.bin, a stack file, agents/.
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-judge-check-"));
    await mkdir(path.join(dir, "node_modules", ".bin"), { recursive: true });
    await symlink(path.join(projectRoot, "bin", "agent-iac.js"), path.join(dir, "node_modules", ".bin", "agent-iac"));
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "judge-check-project", private: true }));
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: agents\nruntime: nodejs\n");
    await writeFile(path.join(dir, "Pulumi.staging.yaml"), stackFile(judge.url));
    await mkdir(path.join(dir, "agents"));
    await writeFile(path.join(dir, "agents", "support.yaml"), "kind: conversational\nname: Support\n");
    git("init", "-q", "-b", "main");
    await writeFile(path.join(dir, ".gitignore"), "node_modules\n.agent-iac\n");
    git("add", "-A");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base");
  }, SLOW);
  afterAll(async () => {
    await sink.close();
    await judge?.close();
    await sandbox?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("measures nothing where no scenario needs it, or where the run has no state credential", async () => {
    const none = await run(["staging"]);
    expect(none.code, none.output).toBe(0);
    expect(none.output).toContain(
      "no scenario of stack staging sets judge_min_agreement or judge_min_kappa: the judge is not measured",
    );
    const fork = await run(["staging"], { PULUMI_BACKEND_URL: "" });
    expect(fork.code, fork.output).toBe(0);
    expect(fork.output).toContain("no state credential");
    expect(judge.requests).toEqual([]);
  });

  it("a scenario that needs it and no labelled transcripts: exit 2, naming the file and the variable", async () => {
    await writeFile(
      path.join(dir, "agents", "support.yaml"),
      "kind: conversational\nname: Support\nsmoke:\n  - name: greets\n    judge_min_kappa: 0.4\n",
    );
    const missing = await run(["staging"]);
    expect(missing.code, missing.output).toBe(2);
    expect(missing.output).toContain("there are no labelled transcripts at judge-labels.yaml");
    expect(missing.output).toContain("AGENT_IAC_JUDGE_LABELS");
    expect(judge.requests).toEqual([]);
  });

  it("measures the judge on the labels (the variable names the file), with the base's judge in a pull request", async () => {
    await writeFile(path.join(dir, "labels.yaml"), LABELS);
    const measured = await run(["staging"], { AGENT_IAC_JUDGE_LABELS: "labels.yaml" });
    expect(measured.code, measured.output).toBe(0);
    expect(measured.output).toContain(
      "a judge gate (judge_min_agreement, judge_min_kappa) is set in agents/support.yaml",
    );
    expect(judge.requests.length).toBeGreaterThan(0);
    expect(judge.requests.at(-1)?.authorization).toBe(`Bearer ${JUDGE_KEY}`);

    // The pull request points the judge at its own endpoint: measured with the base's, the file put back.
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "needs calibration");
    const pullRequest = stackFile(sink.url);
    await writeFile(path.join(dir, "Pulumi.staging.yaml"), pullRequest);
    // No vote from the run before: the judge is asked again.
    await rm(path.join(dir, ".agent-iac"), { recursive: true, force: true });
    const before = judge.requests.length;
    const based = await run(["staging", "main"], { AGENT_IAC_JUDGE_LABELS: "labels.yaml" });
    expect(based.code, based.output).toBe(0);
    expect(sink.requests).toBe(0);
    expect(judge.requests.length).toBeGreaterThan(before);
    // The pull request's files are left as they are: the base is read from git, nothing swapped.
    expect(await readFile(path.join(dir, "Pulumi.staging.yaml"), "utf8")).toBe(pullRequest);

    // stackConfigDir pointing at a copy (issue 59, route 3): the script looked at Pulumi.staging.yaml only.
    await writeFile(path.join(dir, "Pulumi.staging.yaml"), stackFile(judge.url));
    await mkdir(path.join(dir, "copy"), { recursive: true });
    await writeFile(path.join(dir, "copy", "Pulumi.staging.yaml"), pullRequest);
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: agents\nruntime: nodejs\nstackConfigDir: copy\n");
    // The stack exists on the backend, as in CI: Pulumi's own config read is the copy's.
    execFileSync("pulumi", ["stack", "init", "staging"], { cwd: dir, env: { ...process.env, ...sandbox.env } });
    await rm(path.join(dir, ".agent-iac"), { recursive: true, force: true });
    const moved = await run(["staging", "main"], { AGENT_IAC_JUDGE_LABELS: "labels.yaml" });
    expect(sink.requests, moved.output).toBe(0);
    // A project default of the judge's address (route 1).
    await rm(path.join(dir, "copy"), { recursive: true, force: true });
    await writeFile(
      path.join(dir, "Pulumi.yaml"),
      `name: agents\nruntime: nodejs\nconfig:\n  agents:judgeBaseUrl:\n    type: string\n    default: ${sink.url}\n`,
    );
    await writeFile(path.join(dir, "Pulumi.staging.yaml"), "config:\n  agents:judgeModel: test-model\n");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "judge from the environment");
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: agents\nruntime: nodejs\n");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "base without a default");
    await writeFile(
      path.join(dir, "Pulumi.yaml"),
      `name: agents\nruntime: nodejs\nconfig:\n  agents:judgeBaseUrl:\n    type: string\n    default: ${sink.url}\n`,
    );
    await rm(path.join(dir, ".agent-iac"), { recursive: true, force: true });
    const defaulted = await run(["staging", "main"], {
      AGENT_IAC_JUDGE_LABELS: "labels.yaml",
      AGENT_IAC_JUDGE_BASE_URL: judge.url,
    });
    expect(sink.requests, defaulted.output).toBe(0);
    expect(defaulted.code, defaulted.output).toBe(0);
    // Back to the pull request of the first case, for the control below.
    await writeFile(path.join(dir, "Pulumi.yaml"), "name: agents\nruntime: nodejs\n");
    await writeFile(path.join(dir, "Pulumi.staging.yaml"), pullRequest);

    // The control: without the base, the pull request's endpoint is the one asked.
    await run(["staging"], { AGENT_IAC_JUDGE_LABELS: "labels.yaml" });
    expect(sink.requests).toBeGreaterThan(0);
    expect(based.output + measured.output).not.toContain(JUDGE_KEY);
  });
});
