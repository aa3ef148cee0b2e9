// The CI workflow we ship for users: its structure is what the README promises.
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ruleSetups } from "../src/policy/index.ts";
import { projectRoot } from "../src/workspace/index.ts";
import { actionsCore, githubClient, githubStandIn, READ_WRITE_TOKEN, runCommentStep } from "./helpers/github.ts";

/** A GitHub Actions expression, `${{ … }}`. */
const expression = (inner: string) => `\${{ ${inner} }}`;

type Step = {
  uses?: string;
  run?: string;
  name?: string;
  id?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
  if?: string;
  shell?: string;
};
type Job = {
  if?: string;
  environment?: string;
  env?: Record<string, string>;
  steps: Step[];
  concurrency?: { group: string; "cancel-in-progress"?: boolean };
  strategy?: { matrix?: { stack?: string[] } };
};

type Workflow = { on: Record<string, unknown>; env?: Record<string, string>; jobs: Record<string, Job> };

/** The deploy credentials: only the protected environments' deploy steps may name them. */
const DEPLOY_SECRETS = ["AGENT_IAC_API_KEY", "PULUMI_CONFIG_PASSPHRASE", "PULUMI_BACKEND_URL", "PULUMI_ACCESS_TOKEN"];
const secretsIn = (value: unknown): string[] =>
  [...JSON.stringify(value ?? {}).matchAll(/secrets\.([A-Za-z0-9_]+)/g)].map((m) => m[1] as string);

/**
 * What makes a workflow unsafe for pull requests: a secret in the top-level env, in a job's env, or
 * reaching an `npm ci` step; a deploy credential in a job a pull request triggers; an action not
 * pinned to a full commit SHA with its tag in a comment.
 */
function workflowProblems(workflow: Workflow, text: string): string[] {
  const problems: string[] = [];
  for (const name of secretsIn(workflow.env)) problems.push(`top-level env holds secrets.${name}`);
  const pullRequest = "pull_request" in (workflow.on ?? {}) || "pull_request_target" in (workflow.on ?? {});
  for (const [id, job] of Object.entries(workflow.jobs)) {
    const onPullRequest = pullRequest && !/github\.event_name == 'push'/.test(job.if ?? "");
    for (const name of secretsIn(job.env)) problems.push(`job ${id}'s env holds secrets.${name}`);
    if (JSON.stringify(job).includes("secrets: inherit")) problems.push(`job ${id} inherits secrets`);
    for (const step of job.steps) {
      const secrets = secretsIn(step.env).concat(secretsIn(step.with));
      if (/\bnpm (ci|install)\b/.test(step.run ?? "") && secrets.length > 0) {
        problems.push(`job ${id}: npm ci step gets ${secrets.join(", ")}`);
      }
      if (onPullRequest) {
        for (const name of secrets.filter((n) => DEPLOY_SECRETS.includes(n))) {
          problems.push(`job ${id} (pull requests) gets the deploy credential secrets.${name}`);
        }
      }
    }
  }
  for (const line of text.split("\n")) {
    const uses = line.match(/^\s*(?:-\s+)?uses:\s*(\S+)(.*)$/);
    if (!uses || uses[1]?.startsWith("./")) continue;
    if (!/@[0-9a-f]{40}$/.test(uses[1] as string)) problems.push(`${uses[1]} is not pinned to a commit SHA`);
    else if (!/#\s*v\d/.test(uses[2] ?? "")) problems.push(`${uses[1]} has no tag comment`);
  }
  return problems;
}

describe("the workflow safety check itself", () => {
  it("finds each way a pull request could reach the deploy credentials, and unpinned actions", () => {
    const unsafe = `on:
  pull_request: {}
env:
  AGENT_IAC_API_KEY: \${{ secrets.AGENT_IAC_API_KEY }}
jobs:
  plan:
    env:
      TOKEN: \${{ secrets.PULUMI_ACCESS_TOKEN }}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020
      - run: npm ci
        env:
          PULUMI_CONFIG_PASSPHRASE: \${{ secrets.PULUMI_CONFIG_PASSPHRASE }}
      - run: npx agent-iac plan
        env:
          PULUMI_BACKEND_URL: \${{ secrets.PULUMI_BACKEND_URL }}
`;
    expect(workflowProblems(parse(unsafe) as Workflow, unsafe)).toEqual([
      "top-level env holds secrets.AGENT_IAC_API_KEY",
      "job plan's env holds secrets.PULUMI_ACCESS_TOKEN",
      "job plan: npm ci step gets PULUMI_CONFIG_PASSPHRASE",
      "job plan (pull requests) gets the deploy credential secrets.PULUMI_CONFIG_PASSPHRASE",
      "job plan (pull requests) gets the deploy credential secrets.PULUMI_BACKEND_URL",
      "actions/checkout@v4 is not pinned to a commit SHA",
      "actions/setup-node@49933ea5288caeca8642d1e84afbd3f7d6820020 has no tag comment",
    ]);
  });
});

describe(".github/workflows/agents.yml", async () => {
  const text = await readFile(path.join(projectRoot, ".github", "workflows", "agents.yml"), "utf8");
  const workflow = parse(text) as Workflow & { env: Record<string, string> };
  const runs = (job: Job) => job.steps.map((s) => s.run ?? "").join("\n");

  it("runs on pull requests and on pushes to main", () => {
    expect(workflow.on).toHaveProperty("pull_request");
    expect((workflow.on.push as { branches: string[] }).branches).toEqual(["main"]);
  });

  it("plans (validating the files) and posts a Markdown plan, or why there is none, as one updated comment", () => {
    const plan = workflow.jobs.plan as Job;
    expect(plan.if).toContain("pull_request");
    expect(runs(plan)).toMatch(/npm ci/);
    expect(runs(plan)).toMatch(/agent-iac plan .*--markdown reports\/plan\.md/);
    // The plan step's output goes to the comment when it fails.
    expect(runs(plan)).toMatch(/2>&1 \| tee reports\/plan\.log/);
    const comment = plan.steps.find((s) => s.uses?.startsWith("actions/github-script"));
    // Always, whether a plan was written or not (the script says which): the comment is this push's.
    expect(comment?.if).toBe("always()");
    expect(String(comment?.with?.script)).toContain('require("./.github/scripts/plan-comment.cjs")');
    expect(comment?.env?.PLAN_OUTCOME).toBe(expression("steps.plan.outcome"));
    expect(comment?.env?.JOB_STATUS).toBe(expression("job.status"));
    expect(plan.steps.find((s) => s.id === "plan")?.run).toContain("agent-iac plan");
  });

  // Pull requests whose npm ci fails before any download: a trailing comma in package.json, and
  // package-lock.json deleted (npm prints its headline, then some 90 lines of usage).
  const lock = JSON.stringify({ name: "pr", lockfileVersion: 3, requires: true, packages: { "": { name: "pr" } } });
  const brokenInstalls = [
    {
      why: "package.json is not JSON",
      files: { "package.json": '{ "name": "pr",\n  "dependencies": { "yaml": "^2" },\n}\n', "package-lock.json": lock },
      error: /Errors:\n\n```text\nnpm error code EJSONPARSE\n[^`]*Invalid package\.json/,
    },
    {
      why: "package-lock.json is gone",
      files: { "package.json": '{ "name": "pr", "dependencies": { "yaml": "^2" } }\n' },
      error:
        /Errors:\n\n```text\nnpm error code EUSAGE\n[\s\S]*can only install with an existing package-lock\.json[\s\S]*line\(s\) left out/,
    },
  ];
  for (const broken of brokenInstalls) {
    it(`shows npm ci's errors in the comment when it fails (${broken.why}): its step's output reaches the comment step`, async () => {
      const plan = workflow.jobs.plan as Job;
      const npmCi = plan.steps.find((s) => /\bnpm ci\b/.test(s.run ?? "")) as Step;
      const comment = plan.steps.find((s) => s.uses?.startsWith("actions/github-script")) as Step;
      expect(comment.env?.NPM_CI_OUTCOME).toBe(expression(`steps.${npmCi.id}.outcome`));
      expect(npmCi.env).toBeUndefined();
      const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-npm-ci-"));
      const github = await githubStandIn();
      try {
        for (const [file, text] of Object.entries(broken.files)) await writeFile(path.join(dir, file), text);
        // The step as a runner runs it: `shell: bash` is `bash --noprofile --norc -eo pipefail`.
        expect(npmCi.shell).toBe("bash");
        const ran = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", npmCi.run as string], {
          cwd: dir,
          encoding: "utf8",
          env: { ...process.env, npm_config_offline: "true" },
        });
        expect(ran.status, ran.stdout + ran.stderr).not.toBe(0);
        const core = actionsCore(path.join(dir, "summary.md"));
        const env = {
          STACK: "prod",
          PLAN_OUTCOME: "skipped",
          JOB_STATUS: "failure",
          ARTIFACT: "plan-prod",
          NPM_CI_OUTCOME: "failure",
        };
        const client = githubClient(github.url, READ_WRITE_TOKEN);
        const step = await runCommentStep({ github: client, core, env, dir: path.join(dir, "reports") });
        expect(step).toEqual({ failed: false });
        const body = github.comments[0]?.body ?? "";
        expect(body).toContain("`npm ci` failed, so the plan step did not run");
        expect(body).toMatch(broken.error);
      } finally {
        await github.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  }

  it("plays the changed agents' scenarios in the plan and posts the comment even when one fails", () => {
    const plan = workflow.jobs.plan as Job;
    const step = plan.steps.find((s) => s.id === "plan");
    expect(step?.run).toMatch(/mode=\(--behave /);
    expect(step?.run).toContain(`agent-iac plan --stack "$STACK" "\${mode[@]}"`);
    const comment = plan.steps.find((s) => s.uses?.startsWith("actions/github-script"));
    // A failing preview exits 1: the comment still goes out, then the job fails.
    expect(comment?.if).toContain("always()");
    expect(plan.steps.indexOf(comment as Step)).toBeGreaterThan(plan.steps.findIndex((s) => s.id === "plan"));
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
    expect(runs(plan)).toMatch(/mode=\(--behave --behave-report reports\/behave\.json --html reports\/behave\.html\)/);
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
    expect(runs(plan)).toContain('agent-iac plan --stack "$STACK"');
    expect(plan.steps.find((s) => s.id === "plan")?.env?.STACK).toBe(expression("matrix.stack"));
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

  it("gives a pull request no deploy credential, npm ci none, and pins every action by commit", () => {
    expect(workflowProblems(workflow, text)).toEqual([]);
    // pull_request_target would run the pull request's code with the base's secrets.
    expect(workflow.on).not.toHaveProperty("pull_request_target");
    expect(text).not.toMatch(/sk-[A-Za-z0-9]{8,}/);
  });

  it("keeps the deploy credentials in the protected stack environments, each reaching only the steps that use it", () => {
    const deploy = workflow.jobs.deploy as Job;
    expect(deploy.environment).toBe(expression("matrix.stack"));
    const npmCi = deploy.steps.find((s) => s.run === "npm ci");
    expect(npmCi?.env).toBeUndefined();
    const up = deploy.steps.find((s) => /pulumi up/.test(s.run ?? ""));
    expect(up?.env).toEqual({
      AGENT_IAC_API_KEY: expression("secrets.AGENT_IAC_API_KEY"),
      PULUMI_BACKEND_URL: expression("secrets.PULUMI_BACKEND_URL"),
      PULUMI_CONFIG_PASSPHRASE: expression("secrets.PULUMI_CONFIG_PASSPHRASE"),
    });
    // The offline validation needs none.
    expect(deploy.steps.find((s) => /agent-iac validate/.test(s.run ?? ""))?.env).toBeUndefined();
  });

  it("previews pull requests with the preview environment's own credential, offline (saying so) without one", () => {
    const plan = workflow.jobs.plan as Job;
    expect(plan.environment).toBe("preview");
    const step = plan.steps.find((s) => s.id === "plan");
    expect(Object.values(step?.env ?? {}).filter((v) => v.includes("secrets."))).toEqual([
      expression("secrets.AGENT_IAC_PREVIEW_API_KEY"),
      expression("secrets.AGENT_IAC_PREVIEW_JUDGE_API_KEY"),
      expression("secrets.PULUMI_PREVIEW_BACKEND_URL"),
      expression("secrets.PULUMI_PREVIEW_CONFIG_PASSPHRASE"),
    ]);
    expect(step?.run).toMatch(/if \[ -n "\$PULUMI_BACKEND_URL" \]; then\s+mode=\(--behave /);
    expect(step?.run).toContain("mode=(--offline)");
    // The base branch is there for the settings comparison.
    const checkout = plan.steps.find((s) => s.uses?.startsWith("actions/checkout"));
    expect(checkout?.with).toMatchObject({ "fetch-depth": 0, "persist-credentials": false });
  });

  it("measures the judge where a scenario needs it before the calls that rely on it: the plan's with the base's settings", () => {
    const plan = workflow.jobs.plan as Job;
    const step = plan.steps.find((s) => s.id === "plan");
    const run = step?.run ?? "";
    // In the plan step (its output is the comment's when it fails), before the plan, with the pull request's base.
    expect(run).toContain('.github/scripts/judge-check.sh "$STACK" "origin/$GITHUB_BASE_REF" &&');
    expect(run.indexOf("judge-check.sh")).toBeLessThan(run.indexOf("agent-iac plan"));
    expect(run).toMatch(/\}\s*2>&1 \| tee reports\/plan\.log/);
    expect(step?.env?.AGENT_IAC_JUDGE_LABELS).toBe(expression("vars.AGENT_IAC_JUDGE_LABELS"));
    const deploy = workflow.jobs.deploy as Job;
    const measure = deploy.steps.findIndex((s) => /judge-check\.sh/.test(s.run ?? ""));
    const smoke = deploy.steps.findIndex((s) => /agent-iac smoke/.test(s.run ?? ""));
    const up = deploy.steps.findIndex((s) => /pulumi up/.test(s.run ?? ""));
    expect(measure).toBeGreaterThan(up);
    expect(measure).toBeLessThan(smoke);
    expect(deploy.steps[measure]?.run).toBe(`.github/scripts/judge-check.sh ${expression("matrix.stack")}`);
    // The judge step needs no service key; the judged smoke gets the judge's.
    expect(deploy.steps[measure]?.env).not.toHaveProperty("AGENT_IAC_API_KEY");
    expect(deploy.steps[smoke]?.env?.AGENT_IAC_JUDGE_API_KEY).toBe(expression("secrets.AGENT_IAC_JUDGE_API_KEY"));
  });

  it("installs the Pulumi CLI of the project's @pulumi/pulumi release in both jobs, never the latest", async () => {
    const lock = JSON.parse(await readFile(path.join(projectRoot, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string }>;
    };
    const sdk = lock.packages["node_modules/@pulumi/pulumi"]?.version;
    expect(sdk).toMatch(/^\d+\.\d+\.\d+$/);
    for (const id of ["plan", "deploy"]) {
      const step = (workflow.jobs[id] as Job).steps.find((s) => s.uses?.startsWith("pulumi/actions@"));
      expect(step?.with?.["pulumi-version"], id).toBe(sdk);
    }
  });

  it("has a CODEOWNERS example covering the stack files, the policy, the packages and .github/", async () => {
    const owners = await readFile(path.join(projectRoot, ".github", "CODEOWNERS"), "utf8");
    const patterns = owners
      .split("\n")
      .filter((l) => l.trim() && !l.startsWith("#"))
      .map((l) => l.split(/\s+/)[0]);
    expect(patterns).toEqual(
      expect.arrayContaining([
        "/Pulumi*.yaml",
        "/policy*/",
        "/package.json",
        "/package-lock.json",
        "/.github/",
        "/judge-labels*.yaml",
      ]),
    );
  });
});

describe(".github/workflows/drift.yml", async () => {
  const text = await readFile(path.join(projectRoot, ".github", "workflows", "drift.yml"), "utf8");
  const workflow = parse(text) as Workflow & { permissions: Record<string, string> };
  const job = workflow.jobs.drift as Job & { permissions: Record<string, string> };

  it("runs on a schedule and by hand, never on a pull request, with pinned actions and no secret outside a step", () => {
    expect(Object.keys(workflow.on).sort()).toEqual(["schedule", "workflow_dispatch"]);
    expect(workflowProblems(workflow, text)).toEqual([]);
    // Least permissions: read-only at the top; issues: write only for the job that keeps the issue.
    expect(workflow.permissions).toEqual({ contents: "read" });
    expect(job.permissions).toEqual({ contents: "read", issues: "write" });
    // The action SHAs are those agents.yml already pins.
    const pins = (t: string) => [...t.matchAll(/uses:\s*(\S+@[0-9a-f]{40})/g)].map((m) => m[1]);
    return readFile(path.join(projectRoot, ".github", "workflows", "agents.yml"), "utf8").then((agents) => {
      for (const pin of pins(text)) expect(pins(agents)).toContain(pin);
    });
  });

  it("runs drift per stack in the stack's own environment, uploads the reports, then alerts from the report", () => {
    expect(job.strategy?.matrix?.stack).toEqual(["staging", "prod"]);
    expect(job.environment).toBe(expression("matrix.stack"));
    const names = job.steps.map((s) => s.uses?.split("@")[0] ?? s.name ?? s.run);
    const drift = job.steps.find((s) => /agent-iac drift --stack "\$STACK"/.test(s.run ?? ""));
    expect(drift?.run).toMatch(/--json reports\/drift\.json --junit reports\/drift\.xml --html reports\/drift\.html/);
    const upload = names.indexOf("actions/upload-artifact");
    const webhook = job.steps.findIndex((s) => (s.run ?? "").includes("agents:alertWebhook"));
    const alert = job.steps.findIndex((s) => s.uses?.startsWith("actions/github-script"));
    // The webhook (a secret) is read after the upload and masked, for the alert step alone.
    expect(upload).toBeGreaterThan(names.indexOf(drift?.name ?? ""));
    expect(webhook).toBeGreaterThan(upload);
    expect(job.steps[webhook]?.run).toContain("::add-mask::");
    expect(alert).toBe(job.steps.length - 1);
    expect(String(job.steps[alert]?.with?.script)).toContain('require("./.github/scripts/drift-alert.cjs")');
    for (const step of job.steps.slice(upload)) expect(step.if).toBe("always()");
  });
});
