// The pull request's plan comment (.github/scripts/plan-comment.cjs, which the workflow's
// github-script step requires): it always describes the latest push — its plan, shortened under
// GitHub's comment limit with the whole plan named as the job's artifact, or that there is none and
// why, with the errors — and the job summary never shows ✅ for a failed job.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../src/workspace/index.ts";
import {
  actionsCore,
  githubClient,
  githubStandIn,
  READ_ONLY_TOKEN,
  READ_WRITE_TOKEN,
  runCommentStep,
} from "./helpers/github.ts";

type Input = {
  stack: string;
  outcome: string;
  jobStatus: string;
  plan?: string;
  log?: string;
  npmCiOutcome?: string;
  sha?: string;
  runUrl?: string;
  artifact: string;
  limit?: number;
};
type Comment = { id: number; body: string; user: { type: string } };
const script = createRequire(import.meta.url)(path.join(projectRoot, ".github", "scripts", "plan-comment.cjs")) as {
  COMMENT_LIMIT: number;
  commentBody(input: Input): string;
  summaryLine(input: Input): string;
  postPlanComment(options: {
    github: unknown;
    context: unknown;
    core: unknown;
    env: Record<string, string>;
    dir: string;
  }): Promise<void>;
};

const base = { stack: "prod", artifact: "plan-prod", sha: "0123456789abcdef", runUrl: "https://ci.example/run/7" };

/** A plan of `agents` agents, each with a long prompt diff in a folded fenced block. */
function bigPlan(agents: number): string {
  const lines = ["## Agent plan for stack `prod`", "", "| agent | kind | action | why |", "|---|---|---|---|"];
  for (let i = 0; i < agents; i++) lines.push(`| \`agent-${i}\` | conversational | create | new agent |`);
  for (let i = 0; i < agents; i++) {
    const prompt = Array.from({ length: 40 }, (_, n) => `+ line ${n} of agent ${i}'s prompt, long enough to count`);
    lines.push(
      "",
      `### \`agent-${i}\` (create)`,
      "<details><summary>prompt</summary>",
      "",
      "```diff",
      ...prompt,
      "```",
      "",
      "</details>",
    );
  }
  return `${lines.join("\n")}\n`;
}

describe("the plan comment", () => {
  it("posts a plan that fits whole, with the commit it describes", () => {
    const plan = "## Agent plan for stack `prod`\n\nNo changes: 4 agent(s) unchanged.\n";
    const body = script.commentBody({ ...base, outcome: "success", jobStatus: "success", plan });
    expect(body.startsWith("<!-- agent-iac plan: prod -->")).toBe(true);
    expect(body).toContain("`0123456789ab`");
    expect(body).toContain(plan);
    expect(body).not.toContain("Shortened");
    expect(body).not.toContain("❌");
  });

  it("shortens a 60-agent plan under GitHub's limit, closing its open blocks and naming the artifact", () => {
    const plan = bigPlan(60);
    expect(plan.length).toBeGreaterThan(script.COMMENT_LIMIT);
    const body = script.commentBody({ ...base, outcome: "success", jobStatus: "success", plan });
    expect(body.length).toBeLessThanOrEqual(script.COMMENT_LIMIT);
    expect(body).toContain("| `agent-59` | conversational | create | new agent |");
    expect(body).toMatch(/\*\*Shortened:\*\* this plan is [\d,]+ characters/);
    expect(body).toContain(
      "`reports/plan.md` in this job's artifact `plan-prod` ([the run](https://ci.example/run/7))",
    );
    // Every fence and <details> opened is closed before the footer.
    const beforeFooter = body.slice(0, body.indexOf("---\n**Shortened"));
    expect((beforeFooter.match(/^```/gm) ?? []).length % 2).toBe(0);
    expect((beforeFooter.match(/<details>/g) ?? []).length).toBe((beforeFooter.match(/<\/details>/g) ?? []).length);
  });

  it("replaces the plan with 'no plan for this push' and the errors when the plan step failed before writing one", () => {
    const log = "agents/booking.yaml:3:7: config.runtime.model: expected a string\n1 error in agents\n";
    const body = script.commentBody({ ...base, outcome: "failure", jobStatus: "failure", log });
    expect(body).toContain("no plan for this push");
    expect(body).toContain("the plan step failed before it wrote a plan");
    expect(body).toContain("described an earlier push");
    expect(body).toContain("agents/booking.yaml:3:7: config.runtime.model: expected a string");
    const skipped = script.commentBody({ ...base, outcome: "skipped", jobStatus: "failure" });
    expect(skipped).toContain("`npm ci`");
    // npm ci did not run either: the checkout or a setup action failed, whose output only the run has.
    const setup = script.commentBody({ ...base, outcome: "skipped", jobStatus: "failure", npmCiOutcome: "skipped" });
    expect(setup).toContain("the checkout or a setup step failed (its output is in the run's log)");
  });

  it("marks a plan that fails the job, with the step's output", () => {
    const body = script.commentBody({
      ...base,
      outcome: "failure",
      jobStatus: "failure",
      plan: "## Agent plan for stack `prod`\n",
      log: "plan for prod: 1 mandatory policy violation(s)\n",
    });
    expect(body).toContain("❌ This plan of commit `0123456789ab` fails the job");
    expect(body).toContain("plan for prod: 1 mandatory policy violation(s)");
  });

  it("never writes ✅ into the job summary of a failed job", () => {
    expect(script.summaryLine({ ...base, outcome: "success", jobStatus: "success", plan: "x" })).toMatch(/^### ✅/);
    // A fork's plan (no credentials) passes and says it is partial.
    const partial = "## Agent plan\n\n> **This plan is partial.** It could not:\n";
    expect(script.summaryLine({ ...base, outcome: "success", jobStatus: "success", plan: partial })).toMatch(
      /^### ✅ Agent plan for stack `prod`: posted to the pull request \(partial: no credentials/,
    );
    for (const [outcome, jobStatus] of [
      ["failure", "failure"],
      ["skipped", "failure"],
      ["success", "failure"],
      ["cancelled", "cancelled"],
    ]) {
      const line = script.summaryLine({ ...base, outcome: outcome as string, jobStatus: jobStatus as string });
      expect(line, `${outcome}/${jobStatus}`).toMatch(/^### ❌/);
      expect(line).not.toContain("✅");
    }
  });

  it("updates its own earlier comment (found by its marker), never a person's, and appends the summary", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-plan-comment-"));
    try {
      await writeFile(path.join(dir, "plan.log"), "error: the preview failed: no access\n");
      const comments: Comment[] = [
        { id: 1, body: "<!-- agent-iac plan: prod -->\nquoted by a person", user: { type: "User" } },
        { id: 2, body: "<!-- agent-iac plan: prod -->\n## old green plan", user: { type: "Bot" } },
        { id: 3, body: "<!-- agent-iac plan: staging -->\n## staging plan", user: { type: "Bot" } },
      ];
      const calls: string[] = [];
      let summary = "";
      const github = {
        paginate: async () => comments,
        rest: {
          issues: {
            listComments: () => undefined,
            updateComment: async ({ comment_id, body }: { comment_id: number; body: string }) => {
              calls.push(`update ${comment_id}`);
              const comment = comments.find((c) => c.id === comment_id);
              if (comment) comment.body = body;
            },
            createComment: async () => calls.push("create"),
          },
        },
      };
      const context = {
        repo: { owner: "o", repo: "r" },
        issue: { number: 5 },
        payload: { pull_request: { head: { sha: "fedcba9876543210" } } },
        sha: "merge",
        serverUrl: "https://github.example",
        runId: 42,
      };
      const core = {
        summary: {
          addRaw(text: string) {
            summary += text;
            return this;
          },
          write: async () => undefined,
        },
      };
      const env = { STACK: "prod", PLAN_OUTCOME: "failure", JOB_STATUS: "failure", ARTIFACT: "plan-prod" };
      await script.postPlanComment({ github, context, core, env, dir });
      expect(calls).toEqual(["update 2"]);
      expect(comments[1]?.body).toContain("no plan for this push");
      expect(comments[1]?.body).toContain("`fedcba987654`");
      expect(comments[1]?.body).toContain("error: the preview failed: no access");
      expect(comments[1]?.body).not.toContain("old green plan");
      expect(comments[0]?.body).toContain("quoted by a person");
      expect(summary).toMatch(/^### ❌ Agent plan for stack `prod`: no plan was written/);
      expect(await readFile(path.join(dir, "plan.log"), "utf8")).toContain("no access");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe("a fork's pull request (GitHub gives its run a read-only token)", () => {
    const partialPlan =
      "## Agent plan for stack `prod`\n\n> **This plan is partial.** It could not: preview the state\n\n| `booking` | update |\n";

    for (const outcome of ["success", "failure"]) {
      it(`writes the plan and why it is not a comment to the job summary; the job's result is the plan's (${outcome})`, async () => {
        const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-plan-fork-"));
        const github = await githubStandIn();
        try {
          await writeFile(path.join(dir, "plan.md"), partialPlan);
          await writeFile(path.join(dir, "plan.log"), "plan for prod: offline\n");
          const core = actionsCore(path.join(dir, "summary.md"));
          const env = { STACK: "prod", PLAN_OUTCOME: outcome, JOB_STATUS: outcome, ARTIFACT: "plan-prod" };
          const step = await runCommentStep({
            github: githubClient(github.url, READ_ONLY_TOKEN),
            core,
            env,
            dir,
            fork: true,
          });
          // The comment step passes: the job fails only when the plan step did.
          expect(step).toEqual({ failed: false });
          // GitHub was asked and said no: nothing was posted.
          expect(github.requests).toEqual([
            "GET /repos/team/agents/issues/7/comments → 200",
            "POST /repos/team/agents/issues/7/comments → 403",
          ]);
          expect(github.comments).toEqual([]);
          const summary = await readFile(path.join(dir, "summary.md"), "utf8");
          expect(summary).toMatch(
            outcome === "success"
              ? /^### ✅ Agent plan for stack `prod`: below \(not posted: the token is read-only\) \(partial/
              : /^### ❌ Agent plan for stack `prod`: the plan fails the job \(below \(not posted: the token is read-only\)\)/,
          );
          expect(summary).toContain("could not be posted as a pull-request comment: this run's token is read-only");
          expect(summary).toContain("| `booking` | update |");
          expect(core.warnings).toHaveLength(1);
          expect(core.warnings[0]).toMatch(/stack prod could not be posted .* read-only .*fork.* job summary/);
        } finally {
          await github.close();
          await rm(dir, { recursive: true, force: true });
        }
      });
    }

    it("still fails the step for any other refusal (a bad token is not a fork's)", async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-plan-fork-"));
      const github = await githubStandIn();
      try {
        await writeFile(path.join(dir, "plan.md"), partialPlan);
        const core = actionsCore(path.join(dir, "summary.md"));
        const env = { STACK: "prod", PLAN_OUTCOME: "success", JOB_STATUS: "success", ARTIFACT: "plan-prod" };
        const step = await runCommentStep({ github: githubClient(github.url, "wrong"), core, env, dir });
        expect(step.failed).toBe(true);
        expect(String(step.error)).toContain("Bad credentials");
        expect(core.warnings).toEqual([]);
        // The same plan with a token that may write is posted.
        const posted = await runCommentStep({ github: githubClient(github.url, READ_WRITE_TOKEN), core, env, dir });
        expect(posted).toEqual({ failed: false });
        expect(github.comments[0]?.body).toContain("| `booking` | update |");
      } finally {
        await github.close();
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
