// Judged expectations in the behaviour preview (`plan --behave`) and the comparison
// (`smoke --compare`): a proposed persona change makes a rubric fail before anything is created,
// and after the deploy the same rubric flips from the old version to the new one.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { reportSchema } from "../../../src/results/index.ts";
import { type AgentsProject, agentsProject, deployStack, stackOutputs } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { startTestJudge, type TestJudge } from "../../helpers/judge-server.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-judge-flows-service-61ac";
const JUDGE_KEY = "sk-judge-flows-judge-0d5e";
const RUBRIC = "introduces herself as Maya";
const SLOW = 300_000;

describe("judged expectations in plan --behave and smoke --compare", { timeout: SLOW }, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let judge: TestJudge;
  let project: AgentsProject;
  let oldVersions: Record<string, string>;
  const printed: string[] = [];
  const env = () => ({
    ...process.env,
    ...sandbox.env,
    AGENT_IAC_API_KEY: API_KEY,
    AGENT_IAC_JUDGE_BASE_URL: judge.url,
    AGENT_IAC_JUDGE_MODEL: "test-model",
    AGENT_IAC_JUDGE_API_KEY: JUDGE_KEY,
  });
  const cli = async (args: string[]) => {
    const result = await runInProcess(args, { cwd: project.dir, env: env() });
    printed.push(result.stdout, result.stderr);
    return result;
  };
  const read = async (file: string) => {
    const text = await readFile(path.join(project.dir, "reports", file), "utf8");
    printed.push(text);
    return text;
  };
  const editSupport = async (change: (doc: ReturnType<typeof parseDocument>) => void) => {
    const file = path.join(project.dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    change(doc);
    await writeFile(file, doc.toString());
  };

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    // The judge passes a conversation in which the agent says "this is Maya", and fails any other.
    judge = await startTestJudge(
      {
        [RUBRIC]: (transcript) =>
          /this is Maya/.test(transcript)
            ? { verdict: "pass", reason: "she says she is Maya", cite: /this is Maya/ }
            : { verdict: "fail", reason: "the agent introduces herself by another name", cite: /Hello, this is/ },
      },
      { apiKey: JUDGE_KEY },
    );
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await editSupport((doc) =>
      doc.addIn(
        ["smoke"],
        doc.createNode({
          name: "judged-greeting",
          channel: { callee_no: "+15550100100" },
          expect: { judge: [RUBRIC] },
        }),
      ),
    );
    await deployStack(project.stack);
    oldVersions = (await stackOutputs(project.stack)).versions?.value as Record<string, string>;
  }, SLOW);
  afterAll(async () => {
    await project?.cleanup();
    await judge?.close();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("plan --behave: a proposed persona change makes the rubric fail (exit 1) and nothing is created", async () => {
    await editSupport((doc) => doc.setIn(["config", "personas", 0, "name"], "Zoe"));
    const before = await requestCounts(sim);
    const result = await cli([
      "plan",
      "--stack",
      "test",
      "--markdown",
      "plan.md",
      "--behave",
      "--behave-report",
      "behave.json",
    ]);
    const after = await requestCounts(sim);
    expect(result.code, result.stderr).toBe(1);
    expect(after.by_route["POST /agents/conversational"] ?? 0).toBe(
      before.by_route["POST /agents/conversational"] ?? 0,
    );
    const report = reportSchema.parse(JSON.parse(await read("behave.json")));
    const call = report.results.find((r) => r.scenario === "judged-greeting");
    expect(call?.status).toBe("failed");
    const judged = call?.assertions.find((a) => a.judgement);
    expect(judged?.judgement).toMatchObject({
      verdict: "fail",
      agreement: "3/3",
      reason: "the agent introduces herself by another name",
    });
    expect(judged?.context.join("\n")).toContain("Hello, this is Zoe");
    const markdown = await read("plan.md");
    expect(markdown).toContain(`judge: ${RUBRIC}`);
    expect(markdown).toContain("the agent introduces herself by another name");
  });

  it("smoke --compare: after the deploy the rubric flips from pass (old) to fail (new): a regression, exit 1", async () => {
    // The persona change of the previous test is deployed now.
    await deployStack(project.stack);
    await writeFile(path.join(project.dir, "old.json"), JSON.stringify({ support: oldVersions.support }));
    const result = await cli([
      "smoke",
      "--stack",
      "test",
      "--agent",
      "support",
      "--scenario",
      "judged-greeting",
      "--compare",
      "old.json",
      "--json",
      "compare.json",
      "--junit",
      "compare.xml",
    ]);
    expect(result.code, result.stderr).toBe(1);
    const report = reportSchema.parse(JSON.parse(await read("compare.json")));
    const compared = report.scenarios.find((s) => s.scenario === "judged-greeting")?.comparison;
    expect(compared).toMatchObject({ old_verdict: "passed", new_verdict: "failed", outcome: "regression" });
    expect(compared?.expectations).toContainEqual(
      expect.objectContaining({ description: `judge: ${RUBRIC}`, old: true, new: false, outcome: "regression" }),
    );
    const sides = report.results.map((r) => [r.side, r.assertions.find((a) => a.judgement)?.judgement?.verdict]);
    expect(sides).toEqual(
      expect.arrayContaining([
        ["old", "pass"],
        ["new", "fail"],
      ]),
    );
    expect(await read("compare.xml")).toContain("the agent introduces herself by another name");
  });

  it("never shows the judge key", () => {
    expect(printed.join("\n")).not.toContain(JUDGE_KEY);
  });
});
