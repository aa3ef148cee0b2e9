// The CI workflow we ship for users: its structure is what the README promises.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ruleSetups } from "../src/policy/index.ts";
import { projectRoot } from "../src/workspace/index.ts";

/** A GitHub Actions expression, `${{ … }}`. */
const expression = (inner: string) => `\${{ ${inner} }}`;

type Step = {
  uses?: string;
  run?: string;
  name?: string;
  with?: Record<string, unknown>;
  if?: string;
  shell?: string;
};
type Job = {
  if?: string;
  steps: Step[];
  concurrency?: { group: string; "cancel-in-progress"?: boolean };
  strategy?: { matrix?: { stack?: string[] } };
};

describe(".github/workflows/agents.yml", async () => {
  const text = await readFile(path.join(projectRoot, ".github", "workflows", "agents.yml"), "utf8");
  const workflow = parse(text) as {
    on: Record<string, unknown>;
    env: Record<string, string>;
    jobs: Record<string, Job>;
  };
  const runs = (job: Job) => job.steps.map((s) => s.run ?? "").join("\n");

  it("runs on pull requests and on pushes to main", () => {
    expect(workflow.on).toHaveProperty("pull_request");
    expect((workflow.on.push as { branches: string[] }).branches).toEqual(["main"]);
  });

  it("validates and posts a Markdown plan as one updated comment on pull requests", () => {
    const plan = workflow.jobs.plan as Job;
    expect(plan.if).toContain("pull_request");
    expect(runs(plan)).toMatch(/npm ci/);
    expect(runs(plan)).toMatch(/agent-iac validate/);
    expect(runs(plan)).toMatch(/agent-iac plan .*--markdown reports\/plan\.md/);
    const comment = plan.steps.find((s) => s.uses?.startsWith("actions/github-script"));
    expect(String(comment?.with?.script)).toMatch(/updateComment/);
    // The comment posts the file the plan step wrote.
    expect(String(comment?.with?.script)).toContain('readFileSync("reports/plan.md"');
    expect(String(comment?.with?.script)).toMatch(/createComment/);
  });

  it("plays the changed agents' scenarios in the plan and posts the comment even when one fails", () => {
    const plan = workflow.jobs.plan as Job;
    expect(runs(plan)).toMatch(/agent-iac plan .*--behave/);
    const comment = plan.steps.find((s) => s.uses?.startsWith("actions/github-script"));
    // A failing preview exits 1: the comment still goes out, then the job fails.
    expect(comment?.if).toContain("always()");
    expect(plan.steps.indexOf(comment as Step)).toBeGreaterThan(
      plan.steps.findIndex((s) => /--behave/.test(s.run ?? "")),
    );
  });

  it("captures the versions before the deploy and compares the new versions with them after it", () => {
    const deploy = workflow.jobs.deploy as Job;
    const steps = deploy.steps.map((s) => s.run ?? "");
    const capture = steps.findIndex((r) => /pulumi stack output --json/.test(r));
    const up = steps.findIndex((r) => /pulumi up --yes/.test(r));
    const smoke = steps.findIndex((r) => /agent-iac smoke/.test(r));
    expect(capture).toBeGreaterThanOrEqual(0);
    expect(capture).toBeLessThan(up);
    expect(up).toBeLessThan(smoke);
    const file = steps[capture]?.match(/> (reports\/old-versions-.+?\.json)/)?.[1];
    expect(file).toBeDefined();
    expect(steps[smoke]).toContain(`--compare ${file}`);
    // A failed pipe must fail the step (a backend error is not a first deploy).
    expect(deploy.steps[capture]).toMatchObject({ shell: "bash" });
  });

  it("deploys with pulumi up and smoke-calls with a JUnit report on main, one concurrency group per stack", () => {
    const deploy = workflow.jobs.deploy as Job;
    expect(deploy.if).toContain("refs/heads/main");
    expect(runs(deploy)).toMatch(/pulumi up --yes/);
    expect(runs(deploy)).toMatch(/agent-iac smoke .*--junit/);
    expect(runs(deploy).indexOf("pulumi up")).toBeLessThan(runs(deploy).indexOf("agent-iac smoke"));
    expect(deploy.steps.some((s) => s.uses?.startsWith("actions/upload-artifact") && s.if === "always()")).toBe(true);
    expect(deploy.concurrency?.group).toContain(expression("matrix.stack"));
    expect(deploy.concurrency?.["cancel-in-progress"]).toBe(false);
    expect(deploy.strategy?.matrix?.stack).toEqual(["staging", "prod"]);
  });

  it("writes HTML reports into the uploaded artifacts (the job summary needs no step: Actions sets GITHUB_STEP_SUMMARY)", () => {
    const plan = workflow.jobs.plan as Job;
    const deploy = workflow.jobs.deploy as Job;
    expect(runs(plan)).toMatch(/agent-iac plan .*--behave.* --html reports\/behave\.html/);
    expect(runs(deploy)).toMatch(/agent-iac smoke .*--html reports\/smoke-\$\{\{ matrix\.stack \}\}\.html/);
    const upload = deploy.steps.find((s) => s.uses?.startsWith("actions/upload-artifact"));
    expect(String(upload?.with?.path)).toContain(`reports/smoke-${expression("matrix.stack")}.*`);
  });

  it("watches live traffic after the release only when the repository asks for it, against the versions before", () => {
    const deploy = workflow.jobs.deploy as Job;
    const watch = deploy.steps.find((s) => /agent-iac watch/.test(s.run ?? ""));
    expect(watch?.if).toBe("vars.AGENT_IAC_WATCH_AFTER != ''");
    expect(watch?.run).toContain(`--baseline reports/old-versions-${expression("matrix.stack")}.json`);
    expect(deploy.steps.indexOf(watch as Step)).toBeGreaterThan(
      deploy.steps.findIndex((s) => /agent-iac smoke/.test(s.run ?? "")),
    );
  });

  /** The policy pack and config a stack file names (agents:policyPack, agents:policyPackConfig). */
  const stackPolicy = async (stack: string) => {
    const file = parse(await readFile(path.join(projectRoot, `Pulumi.${stack}.yaml`), "utf8")) as {
      config: Record<string, string>;
    };
    return { pack: file.config["agents:policyPack"], config: file.config["agents:policyPackConfig"] };
  };
  const policyLevels = async (file: string) =>
    ruleSetups(JSON.parse(await readFile(path.join(projectRoot, file), "utf8"))).map((s) => [s.rule.name, s.level]);

  it("runs the policy pack in the pull request's plan: each planned stack names the pack and its config", async () => {
    const plan = workflow.jobs.plan as Job;
    expect((workflow.on.pull_request as { paths: string[] }).paths).toEqual(
      expect.arrayContaining(["policy/**", "policy-config/**"]),
    );
    expect(runs(plan)).toContain(`agent-iac plan --stack ${expression("matrix.stack")}`);
    for (const stack of plan.strategy?.matrix?.stack ?? []) {
      const named = await stackPolicy(stack);
      expect(named, stack).toEqual({ pack: "policy", config: `policy-config/${stack}.json` });
      expect((await policyLevels(named.config as string)).length, stack).toBeGreaterThan(0);
    }
  });

  it("deploys with the pack at the stack's levels, prod's rules all mandatory, after checking them offline", async () => {
    const deploy = workflow.jobs.deploy as Job;
    const steps = deploy.steps.map((s) => s.run ?? "");
    const config = `policy-config/${expression("matrix.stack")}.json`;
    const up = steps.findIndex((r) => /pulumi up --yes/.test(r));
    expect(steps[up]).toContain(`--policy-pack policy --policy-pack-config ${config}`);
    const validate = steps.findIndex((r) => /agent-iac validate/.test(r));
    expect(steps[validate]).toContain(`--policy ${config}`);
    expect(validate).toBeLessThan(up);
    for (const stack of deploy.strategy?.matrix?.stack ?? []) {
      expect(await stackPolicy(stack), stack).toEqual({ pack: "policy", config: `policy-config/${stack}.json` });
    }
    const prod = await policyLevels("policy-config/prod.json");
    expect(prod.filter(([, level]) => level !== "disabled").every(([, level]) => level === "mandatory")).toBe(true);
    expect(prod).toEqual(
      expect.arrayContaining([
        ["agent-allowed-models", "mandatory"],
        ["agent-prompt-forbidden-patterns", "mandatory"],
        ["procedure-post-url-hosts", "mandatory"],
      ]),
    );
    // dev (npm start) only warns.
    expect(new Set((await policyLevels("policy-config/dev.json")).map(([, level]) => level))).toEqual(
      new Set(["advisory", "disabled"]),
    );
  });

  it("takes the API key, passphrase and backend from repository secrets, and holds no secret itself", () => {
    expect(workflow.env.AGENT_IAC_API_KEY).toBe(expression("secrets.AGENT_IAC_API_KEY"));
    expect(workflow.env.PULUMI_CONFIG_PASSPHRASE).toBe(expression("secrets.PULUMI_CONFIG_PASSPHRASE"));
    expect(workflow.env.PULUMI_BACKEND_URL).toBe(expression("secrets.PULUMI_BACKEND_URL"));
    expect(text).not.toMatch(/sk-[A-Za-z0-9]{8,}/);
  });
});
