// Every plan shows the stack settings that changed (issue 40), a local one without --base too:
// against the settings of the stack's last successful deploy, as Pulumi recorded them for that
// update. Real Pulumi CLI, real simulator: a stack never deployed lists what its first deploy will
// use; a deployed one lists nothing until a setting changes; a changed secret is "changed" with no
// value anywhere, and a secret set again to the same value is no change.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Plan } from "../../../src/plan/index.ts";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { type RequestCounts, requestCounts, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-plan-settings-key-41c7d2";
const JUDGE_KEY = "sk-plan-settings-judge-9e02ab";
const OTHER_JUDGE_KEY = "sk-plan-settings-judge-rotated-55f1";
const SLOW = 300_000;

/** Requests to the service's own routes (not the simulator's admin routes these counts come from). */
const serviceRequests = (counts: RequestCounts) =>
  Object.entries(counts.by_route)
    .filter(([route]) => !route.includes("/_simulator"))
    .reduce((sum, [, n]) => sum + n, 0);

describe("plan lists the stack settings changed since the last deploy (real Pulumi CLI, simulator)", {
  timeout: SLOW,
}, () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  const printed: string[] = [];

  async function plan() {
    const n = printed.length;
    const md = path.join(project.dir, `plan-${n}.md`);
    const json = path.join(project.dir, `plan-${n}.json`);
    const before = await requestCounts(sim);
    const result = await runInProcess(["plan", "--stack", "staging", "--markdown", md, "--json", json], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, GITHUB_EVENT_NAME: "", GITHUB_BASE_REF: "" },
    });
    const after = await requestCounts(sim);
    const markdown = await readFile(md, "utf8").catch(() => "");
    const jsonText = await readFile(json, "utf8").catch(() => "");
    printed.push(result.stdout, result.stderr, markdown, jsonText);
    return {
      ...result,
      markdown,
      plan: jsonText ? (JSON.parse(jsonText) as Plan) : undefined,
      requests: serviceRequests(after) - serviceRequests(before),
    };
  }
  const up = async () => await deployStack(project.stack);

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY, stackName: "staging" });
  }, SLOW);
  afterAll(async () => {
    // No key, rotated or not, in anything a plan printed or wrote.
    for (const text of printed) {
      for (const key of [API_KEY, JUDGE_KEY, OTHER_JUDGE_KEY]) expect(text).not.toContain(key);
    }
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
  });

  it("a stack never deployed: the settings its first deploy will use, listed first", async () => {
    const first = await plan();
    expect(first.code, first.stderr).toBe(0);
    expect(first.plan?.settings?.deployed).toEqual({ first: true });
    expect(first.plan?.settings?.changes).toContainEqual({
      key: "agents:baseUrl",
      change: "added",
      after: sim.url,
      secret: false,
      guarded: false,
    });
    expect(first.plan?.settings?.changes[0]?.key).toBe("agents:baseUrl");
    const heading = first.markdown.indexOf("Stack settings of the first deploy");
    expect(heading).toBeGreaterThan(0);
    expect(heading).toBeLessThan(first.markdown.indexOf("| agent |"));
    expect(first.stdout).toContain("stack setting(s) set for the first deploy");
  });

  it("deployed and unchanged: no settings section; a changed address, a new secret and a judge model are listed, connection first", async () => {
    await up();
    const same = await plan();
    expect(same.code, same.stderr).toBe(0);
    expect(same.plan?.settings).toBeUndefined();
    expect(same.markdown).not.toContain("Stack settings");

    // The address a deploy would send the key to changes; a plan without --behave still sends nothing anywhere.
    await project.stack.setConfig("agents:baseUrl", { value: "http://127.0.0.1:9" });
    await project.stack.setConfig("agents:judgeModel", { value: "judge-model-2" });
    await project.stack.setConfig("agents:judgeApiKey", { value: JUDGE_KEY, secret: true });
    const changed = await plan();
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.requests).toBe(0);
    const deployed = changed.plan?.settings?.deployed;
    expect(deployed && "update" in deployed ? typeof deployed.update : undefined).toBe("number");
    expect(changed.plan?.settings?.changes).toEqual([
      {
        key: "agents:baseUrl",
        change: "changed",
        before: sim.url,
        after: "http://127.0.0.1:9",
        secret: false,
        guarded: false,
      },
      { key: "agents:judgeApiKey", change: "added", secret: true, guarded: false },
      { key: "agents:judgeModel", change: "added", after: "judge-model-2", secret: false, guarded: false },
    ]);
    expect(changed.markdown).toMatch(/### Stack settings changed since the last deploy \(update \d+, /);
    expect(changed.markdown).toContain("- `agents:judgeApiKey`: added (secret, value not shown)");
    // Not a pull request: nothing is held, nothing read from elsewhere.
    expect(changed.markdown).not.toContain("A human must review this");
    expect(changed.stdout).toContain("3 stack setting(s) changed against the last deploy");
  });

  it("a rotated secret is listed as changed, without its values; the same secret set again is no change", async () => {
    await project.stack.setConfig("agents:baseUrl", { value: sim.url });
    await up();
    expect((await plan()).plan?.settings).toBeUndefined();
    // Set again with the same value: a new ciphertext in Pulumi.staging.yaml, the same secret.
    await project.stack.setConfig("agents:judgeApiKey", { value: JUDGE_KEY, secret: true });
    const again = await plan();
    expect(again.plan?.settings).toBeUndefined();
    await project.stack.setConfig("agents:judgeApiKey", { value: OTHER_JUDGE_KEY, secret: true });
    const rotated = await plan();
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.plan?.settings?.changes).toEqual([
      { key: "agents:judgeApiKey", change: "changed", secret: true, guarded: false },
    ]);
    expect(rotated.markdown).toContain("- `agents:judgeApiKey`: changed (secret, value not shown)");
  });

  it("a stack destroyed since its last deploy lists its settings as for a first deploy", async () => {
    expect((await project.stack.destroy()).summary.result).toBe("succeeded");
    const after = await plan();
    expect(after.code, after.stderr).toBe(0);
    expect(after.plan?.settings?.deployed).toEqual({ first: true });
    expect(after.markdown).toContain("Stack settings of the first deploy");
  });
});
