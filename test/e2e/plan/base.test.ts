// A pull request's plan reads the settings that send credentials and transcripts, or run code,
// from its base branch (issue 40). Replays the reproductions against the real Pulumi CLI, the
// simulator, a real judge and a listening sink on loopback: a pull request that points
// agents:baseUrl or agents:judgeBaseUrl at the sink, or agents:policyPack at a folder it adds, gets
// a plan that names the change first, sends the sink nothing, runs no new pack and exits 1. The
// same plan without such a change behaves as without a base.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import type { Plan } from "../../../src/plan/index.ts";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runCli } from "../../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-plan-base-ci-key-7f3a91c0";
const JUDGE_KEY = "sk-plan-base-judge-key-2b8e";
const RUBRIC = "greets the caller";
const SLOW = 300_000;

type Recorded = { method: string; url: string; headers: IncomingHttpHeaders; body: string };

/** A real HTTP server on loopback that records every request it gets (the pull request's endpoint). */
async function startSink() {
  const requests: Recorded[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    request.on("end", () => {
      requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("plan in a pull request: settings from the base branch (real Pulumi CLI, simulator, judge, sink)", {
  timeout: SLOW,
}, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let judge: TestJudge;
  let sink: Awaited<ReturnType<typeof startSink>>;
  let project: AgentsProject;
  let stackFile: string;
  let baseStackFile: string;
  const printed: string[] = [];
  const marker = () => path.join(project.dir, "pr-pack", "ran");

  const git = (...args: string[]) => execFileSync("git", args, { cwd: project.dir, encoding: "utf8" });
  const env = (extra: Record<string, string> = {}) => ({
    ...process.env,
    ...sandbox.env,
    AGENT_IAC_API_KEY: API_KEY,
    AGENT_IAC_JUDGE_MODEL: "test-model",
    AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
    GITHUB_EVENT_NAME: "",
    GITHUB_BASE_REF: "",
    GITHUB_STEP_SUMMARY: "",
    ...extra,
  });
  async function plan(args: string[], extra: Record<string, string> = {}) {
    const n = printed.length;
    const md = path.join(project.dir, `plan-${n}.md`);
    const json = path.join(project.dir, `plan-${n}.json`);
    const before = await requestCounts(sim);
    const judged = judge.requests.length;
    // Every run asks the judge itself (a cached vote would hide where a transcript goes).
    const fresh = args.includes("--behave") ? ["--no-judge-cache"] : [];
    const result = await runCli(["plan", "--stack", "staging", "--markdown", md, "--json", json, ...args, ...fresh], {
      cwd: project.dir,
      env: env(extra),
    });
    const after = await requestCounts(sim);
    const markdown = await readFile(md, "utf8").catch(() => "");
    const jsonText = await readFile(json, "utf8").catch(() => "");
    printed.push(result.stdout, result.stderr, markdown, jsonText);
    return {
      ...result,
      markdown,
      plan: jsonText ? (JSON.parse(jsonText) as Plan) : undefined,
      conversations: (after.by_route["POST /conversations"] ?? 0) - (before.by_route["POST /conversations"] ?? 0),
      judged: judge.requests.length - judged,
    };
  }
  /** The pull request's edit of Pulumi.staging.yaml. */
  const setStackSetting = async (key: string, value: string) => {
    const doc = parseDocument(await readFile(stackFile, "utf8"));
    doc.setIn(["config", key], value);
    await writeFile(stackFile, doc.toString());
  };
  /** The pull request's change to an agent: one its scenarios can preview (a config section). */
  const editSupport = async () => {
    const file = path.join(project.dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    doc.setIn(["config", "voice", "boosted_keywords"], ["Northwind", "router", "outage", "modem"]);
    await writeFile(file, doc.toString());
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    judge = await startTestJudge({ [RUBRIC]: [{ verdict: "pass", reason: "it does" }] }, { apiKey: JUDGE_KEY });
    sink = await startSink();
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY, stackName: "staging" });
    await project.stack.setConfig("agents:judgeBaseUrl", { value: judge.url });
    // A judged scenario on support, so that the behaviour preview sends a transcript to the judge.
    await addScenarios(project.dir, "support", {
      name: "judged-greeting",
      channel: { callee_no: "+15550100100" },
      expect: { judge: [RUBRIC] },
    });
    // The pack a pull request adds: running it leaves a file behind.
    await mkdir(path.join(project.dir, "pr-pack"));
    await writeFile(path.join(project.dir, "pr-pack", "PulumiPolicy.yaml"), "runtime: nodejs\nversion: 0.0.1\n");
    await writeFile(
      path.join(project.dir, "pr-pack", "package.json"),
      JSON.stringify({ name: "pr-pack", type: "module", main: "index.js" }),
    );
    await writeFile(
      path.join(project.dir, "pr-pack", "index.js"),
      'import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("./ran", import.meta.url), "ran");\n',
    );
    await deployStack(project.stack);
    // The base branch: the deployed files, committed on main (and fetched as origin/main, as CI has it).
    stackFile = path.join(project.dir, "Pulumi.staging.yaml");
    baseStackFile = await readFile(stackFile, "utf8");
    git("init", "-q", "-b", "main");
    await writeFile(path.join(project.dir, ".gitignore"), "node_modules\nplan-*\nreports\n");
    git("add", "-A");
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base");
    git("remote", "add", "origin", project.dir);
    git("fetch", "-q", "origin", "main");
  }, SLOW);
  afterEach(async () => {
    // Each pull request starts from the base.
    git("checkout", "-q", "--", ".");
    await writeFile(stackFile, baseStackFile);
    await rm(marker(), { force: true });
  });
  afterAll(async () => {
    // Nothing any run printed holds a key.
    for (const text of printed) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(JUDGE_KEY);
    }
    await project?.cleanup();
    await sink?.close();
    await judge?.close();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("without a guarded change, plan --behave --base behaves as without a base: same plan, same calls, same exit", async () => {
    await editSupport();
    const plain = await plan(["--behave"]);
    const based = await plan(["--behave", "--base", "main"]);
    expect(based.code, based.stderr).toBe(plain.code);
    expect(based.plan?.settings).toBeUndefined();
    expect(based.plan?.agents.map((a) => [a.agent, a.action])).toEqual(
      plain.plan?.agents.map((a) => [a.agent, a.action]),
    );
    expect(based.plan?.behave).toEqual(plain.plan?.behave);
    expect(based.conversations).toBe(plain.conversations);
    expect(based.conversations).toBeGreaterThan(0);
    expect(based.judged).toBeGreaterThan(0);
    expect(based.markdown).not.toContain("Stack settings changed");
    // An unguarded setting change is listed, not held.
    await setStackSetting("agents:judgeTimeoutSec", "30");
    const listed = await plan(["--base", "main"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.plan?.settings?.changes).toEqual([
      { key: "agents:judgeTimeoutSec", change: "added", after: "30", secret: false, guarded: false },
    ]);
    expect(sink.requests).toEqual([]);
  });

  it("a pull request pointing agents:baseUrl at its own endpoint: no request reaches it, the change is shown first, exit 1", async () => {
    await editSupport();
    await setStackSetting("agents:baseUrl", sink.url);
    // In GitHub Actions: the pull_request event's base branch, as origin/<branch>.
    const result = await plan(["--behave"], { GITHUB_EVENT_NAME: "pull_request", GITHUB_BASE_REF: "main" });
    expect(result.code, result.stderr).toBe(1);
    expect(sink.requests).toEqual([]);
    // The preview ran against the base's address.
    expect(result.conversations).toBeGreaterThan(0);
    expect(result.plan?.settings).toEqual({
      base: "origin/main",
      changes: [
        { key: "agents:baseUrl", change: "changed", before: sim.url, after: sink.url, secret: false, guarded: true },
      ],
    });
    const settings = result.markdown.indexOf("Stack settings changed");
    expect(settings).toBeGreaterThan(0);
    expect(settings).toBeLessThan(result.markdown.indexOf("| agent |"));
    expect(result.markdown).toContain(`after merge, the \`staging\` deploy sends its API key to \`${sink.url}\``);
    expect(result.stderr).toContain("the pull request changes agents:baseUrl");
  });

  it("a pull request adding agents:judgeBaseUrl of its own: no judge key and no transcript reach it, exit 1", async () => {
    await editSupport();
    await setStackSetting("agents:judgeBaseUrl", `${sink.url}/v1`);
    const result = await plan(["--behave", "--base", "main"]);
    expect(result.code, result.stderr).toBe(1);
    expect(sink.requests).toEqual([]);
    // The base's judge got the transcripts, with its key.
    expect(result.judged).toBeGreaterThan(0);
    expect(judge.requests.at(-1)?.authorization).toBe(`Bearer ${JUDGE_KEY}`);
    expect(result.markdown).toContain(
      `after merge, the \`staging\` smoke calls send the judge key and the transcripts to \`${sink.url}/v1\``,
    );
  });

  it("a pull request adding agents:callerBaseUrl of its own (issue 49): the persona's key and transcript go to the base's model, none to it; exit 1", async () => {
    // The base names no caller model: a persona falls back to the judge's address and key. The
    // test judge plays the caller too (a request with no rubric): one line, then DONE.
    judge.script[""] = (text) => ({ malformed: text.includes("caller: ") ? "DONE" : "Hi, my router keeps dropping." });
    await editSupport();
    await addScenarios(project.dir, "support", {
      name: "persona-router",
      channel: { callee_no: "+15550100101" },
      transport: "ws",
      // The caller's fidelity check (a judged rubric of its own) is not what this case is about.
      caller: { persona: "A customer whose router drops", max_turns: 2, check: false },
    });
    await setStackSetting("agents:callerBaseUrl", `${sink.url}/v1`);
    const personaAsks = () => judge.requests.filter((r) => JSON.stringify(r.body).includes("You play the caller"));
    const asked = personaAsks().length;
    const result = await plan(["--behave", "--base", "main"]);
    expect(result.code, result.stderr).toBe(1);
    // Nothing reached the pull request's address: no key, no transcript.
    expect(sink.requests).toEqual([]);
    // The persona was played by the base's model, with the base's key.
    expect(personaAsks().length).toBeGreaterThan(asked);
    expect(personaAsks().at(-1)?.authorization).toBe(`Bearer ${JUDGE_KEY}`);
    expect(result.plan?.settings?.changes).toEqual([
      { key: "agents:callerBaseUrl", change: "added", after: `${sink.url}/v1`, secret: false, guarded: true },
    ]);
    expect(result.markdown).toContain("### ⚠️ Stack settings changed (against `main`)");
    expect(result.markdown).toContain(
      `after merge, the \`staging\` smoke calls send the persona caller's key and the transcripts to \`${sink.url}/v1\``,
    );
    expect(result.stderr).toContain("the pull request changes agents:callerBaseUrl");
  });

  it("a pull request naming a pack it adds in agents:policyPack: the pack does not run (it would without a base), exit 1", async () => {
    await setStackSetting("agents:policyPack", "pr-pack");
    const result = await plan(["--base", "main"]);
    expect(result.code, result.stderr).toBe(1);
    expect(existsSync(marker())).toBe(false);
    expect(result.plan?.settings?.changes).toEqual([
      { key: "agents:policyPack", change: "added", after: "pr-pack", secret: false, guarded: true },
    ]);
    expect(result.markdown).toContain("after merge, previews and deploys of `staging` run the code in `pr-pack`");
    expect(sink.requests).toEqual([]);
    // The control: the same tree planned with no base runs the pack.
    await plan([]);
    expect(existsSync(marker())).toBe(true);
  });

  it("without credentials (a fork): the plan it can have, saying what it could not do; exit 0, or 1 on a guarded change", async () => {
    const fork = {
      AGENT_IAC_API_KEY: "",
      PULUMI_BACKEND_URL: "",
      PULUMI_CONFIG_PASSPHRASE: "",
      AGENT_IAC_JUDGE_API_KEY: "",
    };
    await editSupport();
    const plain = await plan(["--offline", "--base", "main"], fork);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.markdown).toContain("**This plan is partial.** It could not:");
    expect(plain.markdown).toContain("preview the stack's state");
    expect(plain.markdown).toContain("a fork's pull request gets no secrets");
    expect(plain.markdown).toMatch(/the agent files: \d+ agent\(s\) valid/);
    expect(`${plain.markdown}${plain.stderr}${plain.stdout}`).not.toMatch(/stack init/);
    expect(plain.plan?.limits?.length).toBe(2);
    await setStackSetting("agents:policyPack", "pr-pack");
    const changed = await plan(["--offline", "--base", "main"], fork);
    expect(changed.code, changed.stderr).toBe(1);
    expect(existsSync(marker())).toBe(false);
    expect(changed.markdown.indexOf("**This plan is partial.**")).toBeLessThan(
      changed.markdown.indexOf("Stack settings changed"),
    );
    // The same pull request planned without --offline on a backend without its stack: no "create the stack" advice.
    const empty = path.join(project.dir, "empty-backend");
    await mkdir(empty, { recursive: true });
    const noStack = await plan(["--base", "main"], {
      ...fork,
      PULUMI_BACKEND_URL: `file://${empty}`,
      PULUMI_CONFIG_PASSPHRASE: "not-the-stacks",
    });
    expect(noStack.code).not.toBe(0);
    expect(noStack.stderr).toContain('there is no stack "staging"');
    expect(noStack.stderr).toContain("agent-iac plan --offline");
    expect(noStack.stderr).not.toMatch(/stack init/);
    // A broken agent file: exit 1 with the file's line, no plan.
    await writeFile(path.join(project.dir, "agents", "support.yaml"), "kind: conversational\nname: [\n");
    const invalid = await plan(["--offline", "--base", "main"], fork);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain("support.yaml");
    expect(sink.requests).toEqual([]);
  });

  it("a pull request re-blessing the drift baseline and setting agents:alertWebhook: both named, the webhook held (exit 1), nothing sent", async () => {
    const fork = { AGENT_IAC_API_KEY: "", PULUMI_BACKEND_URL: "", PULUMI_CONFIG_PASSPHRASE: "" };
    const baselines = path.join(project.dir, "baselines");
    try {
      await mkdir(baselines, { recursive: true });
      await writeFile(path.join(baselines, "staging.json"), "{}\n");
      const blessed = await plan(["--offline", "--base", "main"], fork);
      expect(blessed.code, blessed.stderr).toBe(0);
      expect(blessed.plan?.baseline).toEqual({ file: "baselines/staging.json", base: "main", change: "added" });
      expect(blessed.markdown).toContain("### ⚠️ Drift baseline added: `baselines/staging.json` (against `main`)");
      await setStackSetting("agents:alertWebhook", sink.url);
      const hooked = await plan(["--offline", "--base", "main"], fork);
      expect(hooked.code, hooked.stderr).toBe(1);
      expect(hooked.plan?.settings?.changes).toContainEqual(
        expect.objectContaining({ key: "agents:alertWebhook", change: "added", guarded: true }),
      );
      expect(hooked.markdown).toContain("drift workflow sends each change of its drift state to");
      expect(sink.requests).toEqual([]);
    } finally {
      await rm(baselines, { recursive: true, force: true });
    }
  });

  it("refuses a base git does not know: a configuration error, nothing previewed", async () => {
    const result = await plan(["--base", "no-such-branch"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--base no-such-branch: not a commit of this repository");
  });
});
