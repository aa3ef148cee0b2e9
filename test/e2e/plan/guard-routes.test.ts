// The four one-line pull requests of issue 59 that moved the judge's address past the guard with a
// green plan: a project default in Pulumi.yaml, a YAML merge key in the stack file, stackConfigDir
// pointing at a copy, and a qualified `--stack organization/<project>/<stack>`. Each is played as
// the workflow plays it (a git repository, a base commit, the pull request's change in the working
// tree, `plan --behave` in a pull_request event), on the real Pulumi CLI, the simulator, a real
// judge and a listening sink: Pulumi's own `pulumi config --json` sends the judge to the sink (the
// route is real), agent-iac's reader of the files says the same, and the plan names the change,
// sends the sink nothing and exits 1.
import { execFileSync } from "node:child_process";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { plainSettings, stackFiles, workingTree } from "../../../src/settings/index.ts";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runCli } from "../../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { commitBase, planFiles } from "../../helpers/pull-request.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-guard-routes-ci-key-5d21";
const JUDGE_KEY = "sk-guard-routes-judge-key-93ae";
const RUBRIC = "greets the caller";
const SLOW = 300_000;
const JUDGE_URL = "agents:judgeBaseUrl";

describe("plan in a pull request: the guard reads the settings as Pulumi resolves them (real Pulumi CLI, simulator, judge, sink)", {
  timeout: SLOW,
}, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let judge: TestJudge;
  let project: AgentsProject;
  const sink = { url: "", requests: [] as string[], close: async () => {} };
  const printed: string[] = [];
  const file = (name: string) => path.join(project.dir, name);

  let git: (...args: string[]) => string;
  const env = () => ({
    ...process.env,
    ...sandbox.env,
    // The plan job of a pull request against main.
    GITHUB_EVENT_NAME: "pull_request",
    GITHUB_BASE_REF: "main",
    GITHUB_STEP_SUMMARY: "",
    AGENT_IAC_API_KEY: API_KEY,
    // The base's judge comes from the environment (as the workflow's preview key does): a stack
    // setting the pull request adds anywhere Pulumi reads one would win over it.
    AGENT_IAC_JUDGE_BASE_URL: judge.url,
    AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
    AGENT_IAC_JUDGE_MODEL: "test-model",
  });
  /** `pulumi config --json` of the head: what Pulumi itself uses. */
  const pulumiConfig = (stack: string) =>
    JSON.parse(
      execFileSync("pulumi", ["config", "--json", "--stack", stack], {
        cwd: project.dir,
        env: env(),
        encoding: "utf8",
      }),
    ) as Record<string, { value: string; secret: boolean }>;
  async function plan(stack: string) {
    const n = printed.length;
    const md = file(`plan-${n}.md`);
    const json = file(`plan-${n}.json`);
    const judged = judge.requests.length;
    const result = await runCli(
      ["plan", "--stack", stack, "--behave", "--no-judge-cache", "--markdown", md, "--json", json],
      { cwd: project.dir, env: env() },
    );
    const written = await planFiles(md, json);
    printed.push(result.stdout, result.stderr, written.markdown, written.jsonText);
    return { ...result, ...written, judged: judge.requests.length - judged };
  }
  /** Pulumi sends the judge to the sink on this head, and agent-iac's reader of the files agrees with Pulumi. */
  async function routeIsReal(stack: string) {
    const config = pulumiConfig(stack);
    expect(config[JUDGE_URL]?.value).toBe(`${sink.url}/v1`);
    const resolved = await stackFiles(workingTree(project.dir), stack);
    const plain = Object.fromEntries(
      Object.entries(config)
        .filter(([, v]) => !v.secret)
        .map(([k, v]) => [k, { value: v.value }]),
    );
    expect(plainSettings(resolved.settings)).toEqual(plain);
  }
  /** The plan of a pull request that moves the judge: held, named, nothing sent to the sink. */
  function expectHeld(result: Awaited<ReturnType<typeof plan>>, keys: string[]) {
    expect(result.code, result.stderr).toBe(1);
    expect(sink.requests).toEqual([]);
    // The base's judge got the transcripts, with the base's key.
    expect(result.judged).toBeGreaterThan(0);
    expect(judge.requests.at(-1)?.authorization).toBe(`Bearer ${JUDGE_KEY}`);
    const changes = result.plan?.settings?.changes ?? [];
    expect(changes.filter((c) => c.guarded).map((c) => c.key)).toEqual(keys);
    for (const key of keys) expect(result.markdown).toContain(`⚠️ \`${key}\``);
    expect(result.stderr).toContain(`the pull request changes ${keys.join(", ")}`);
  }
  const editSupport = async () => {
    const agent = file("agents/support.yaml");
    const doc = parseDocument(await readFile(agent, "utf8"));
    doc.setIn(["config", "voice", "boosted_keywords"], ["Northwind", "router", "outage", "modem"]);
    await writeFile(agent, doc.toString());
  };
  const editYaml = async (name: string, edit: (doc: ReturnType<typeof parseDocument>) => void) => {
    const doc = parseDocument(await readFile(file(name), "utf8"));
    edit(doc);
    await writeFile(file(name), doc.toString());
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    judge = await startTestJudge({ [RUBRIC]: [{ verdict: "pass", reason: "it does" }] }, { apiKey: JUDGE_KEY });
    const server = createServer((request, response) => {
      sink.requests.push(`${request.method} ${request.url}`);
      request.resume();
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    sink.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY, stackName: "staging" });
    await addScenarios(project.dir, "support", {
      name: "judged-greeting",
      channel: { callee_no: "+15550100100" },
      expect: { judge: [RUBRIC] },
    });
    await deployStack(project.stack);
    git = await commitBase(project.dir);
  }, SLOW);
  afterEach(async () => {
    // Each pull request starts from the base.
    git("checkout", "-q", "--", ".");
    await rm(file("copy"), { recursive: true, force: true });
  });
  afterAll(async () => {
    for (const text of printed) {
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(JUDGE_KEY);
    }
    await project?.cleanup();
    await sink.close();
    await judge?.close();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("the control: the same change with no route plays the scenarios with the base's judge, exit 0", async () => {
    await editSupport();
    const result = await plan("staging");
    expect(result.code, result.stderr).toBe(0);
    expect(result.judged).toBeGreaterThan(0);
    expect(result.plan?.settings).toBeUndefined();
    expect(sink.requests).toEqual([]);
  });

  it("route 1: a project default in Pulumi.yaml", async () => {
    await editSupport();
    await editYaml("Pulumi.yaml", (doc) =>
      doc.setIn(["config", JUDGE_URL], doc.createNode({ type: "string", default: `${sink.url}/v1` })),
    );
    await routeIsReal("staging");
    const result = await plan("staging");
    expectHeld(result, ["project config agents:judgeBaseUrl", JUDGE_URL]);
    expect(result.markdown).toContain(
      `after merge, the \`staging\` smoke calls send the judge key and the transcripts to \`${sink.url}/v1\``,
    );
  });

  it("route 2: a YAML merge key in the stack file", async () => {
    await editSupport();
    const text = await readFile(file("Pulumi.staging.yaml"), "utf8");
    await writeFile(
      file("Pulumi.staging.yaml"),
      text.replace("config:\n", `config:\n  <<: { ${JUDGE_URL}: ${sink.url}/v1 }\n`),
    );
    await routeIsReal("staging");
    expectHeld(await plan("staging"), [JUDGE_URL]);
  });

  it("route 3: stackConfigDir pointing at a copy of the stack file", async () => {
    await editSupport();
    await mkdir(file("copy"));
    await cp(file("Pulumi.staging.yaml"), file("copy/Pulumi.staging.yaml"));
    await editYaml("copy/Pulumi.staging.yaml", (doc) => doc.setIn(["config", JUDGE_URL], `${sink.url}/v1`));
    await editYaml("Pulumi.yaml", (doc) => doc.set("stackConfigDir", "copy"));
    await routeIsReal("staging");
    const result = await plan("staging");
    expectHeld(result, ["stack file (stackConfigDir)", JUDGE_URL]);
    expect(result.markdown).toContain(
      "after merge, `staging` reads every setting from the stack file `copy/Pulumi.staging.yaml`",
    );
  });

  it("route 4: --stack organization/<project>/<stack> reads Pulumi.<stack>.yaml", async () => {
    await editSupport();
    await editYaml("Pulumi.staging.yaml", (doc) => doc.setIn(["config", JUDGE_URL], `${sink.url}/v1`));
    await routeIsReal("organization/agents/staging");
    expectHeld(await plan("organization/agents/staging"), [JUDGE_URL]);
  });
});
