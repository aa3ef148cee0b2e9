// The pull request's plan comment and the job summary, for .github/workflows/agents.yml (run by
// actions/github-script, which can `require` it: plain CommonJS, no dependencies, so it runs even
// when `npm ci` failed). The comment always describes the latest push: its plan, shortened to
// GitHub's comment limit with the whole plan named in the job's artifact, or, when the push failed
// before a plan was written, that there is none and why, with the errors (the plan step's, or
// `npm ci`'s). A fork's pull request gets a read-only token that cannot comment: the plan then goes
// to the job summary with a warning, and the job's result stays the plan's own. Tested by
// test/plan-comment.test.ts and test/workflow.test.ts.
const fs = require("node:fs");

/** GitHub refuses a comment body longer than this (422). */
const COMMENT_LIMIT = 65536;
/** Lines of a failed step's output shown: its first (where npm puts the error's headline) and its last. */
const HEAD_LINES = 12;
const ERROR_LINES = 60;

const marker = (stack) => `<!-- agent-iac plan: ${stack} -->`;

/** A fenced block whose fence no backtick run inside can close. */
function fenced(text, language = "text") {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${language}\n${text}\n${fence}`;
}

/**
 * A log's first and last lines, at most `max` characters: the end has the failure, the start may
 * have its headline (npm's usage error prints it first, then 90 lines of usage).
 */
function tail(text, max = 8000) {
  const all = text.trimEnd().split("\n");
  const kept =
    all.length <= ERROR_LINES
      ? all
      : [
          ...all.slice(0, HEAD_LINES),
          `… ${all.length - ERROR_LINES} line(s) left out (the whole output is in the job's artifact) …`,
          ...all.slice(HEAD_LINES - ERROR_LINES),
        ];
  const joined = kept.join("\n");
  return joined.length > max ? joined.slice(-max) : joined;
}

/**
 * Markdown cut to at most `budget` characters at a line end, with any open code fence and
 * <details> block closed, so the rest of the comment still renders.
 */
function shorten(markdown, budget) {
  if (markdown.length <= budget) return { text: markdown, shortened: false };
  const cut = markdown.slice(0, budget);
  const lines = cut.slice(0, Math.max(0, cut.lastIndexOf("\n"))).split("\n");
  let fence = null;
  let details = 0;
  for (const line of lines) {
    const run = line.match(/^(`{3,})/)?.[1];
    if (fence === null && run) fence = run;
    else if (fence !== null && line.trim() === fence) fence = null;
    else if (fence === null && /^<details>/.test(line)) details++;
    else if (fence === null && /^<\/details>/.test(line)) details--;
  }
  const closing = [...(fence ? [fence] : []), ...Array.from({ length: Math.max(0, details) }, () => "</details>")];
  return { text: [...lines, ...closing].join("\n"), shortened: true };
}

/** Why a push has no plan: which step failed or did not run. */
function whyNoPlan({ outcome, npmCiOutcome }) {
  if (outcome === "cancelled") return "the plan step was cancelled (a newer push supersedes this one)";
  if (outcome !== "skipped" && outcome !== "") return "the plan step failed before it wrote a plan";
  if (npmCiOutcome === "failure") return "`npm ci` failed, so the plan step did not run";
  if (npmCiOutcome === "skipped") {
    return "the checkout or a setup step failed (its output is in the run's log), so neither `npm ci` nor the plan step ran";
  }
  return "an earlier step failed (checkout, setup or `npm ci`), so the plan step did not run";
}

/**
 * The comment's body for one stack's plan job.
 * @param {{ stack: string, outcome: string, jobStatus: string, plan?: string, log?: string,
 *   npmCiOutcome?: string, npmCiLog?: string, sha?: string, runUrl?: string, artifact: string,
 *   limit?: number }} input
 *   outcome: the plan step's (success, failure, cancelled, skipped); plan: reports/plan.md if it
 *   was written; log: the plan step's output (reports/plan.log); npmCiOutcome and npmCiLog: the
 *   `npm ci` step's outcome and output (reports/npm-ci.log), shown when it failed.
 */
function commentBody(input) {
  const limit = input.limit ?? COMMENT_LIMIT;
  const commit = input.sha ? ` of commit \`${input.sha.slice(0, 12)}\`` : "";
  const run = input.runUrl ? ` ([the run](${input.runUrl}))` : "";
  const head = [marker(input.stack)];
  const errors = input.log?.trim()
    ? ["", "<details><summary>The plan step's output</summary>", "", fenced(tail(input.log)), "", "</details>"]
    : [];
  if (input.plan === undefined) {
    // `npm ci` gets no credential, so its output holds none.
    const output = input.npmCiOutcome === "failure" ? input.npmCiLog : input.log;
    const body = [
      ...head,
      `## Agent plan for stack \`${input.stack}\`: no plan for this push`,
      "",
      `❌ No plan${commit}: ${whyNoPlan(input)}${run}. Any plan shown here before described an earlier push, not this tree.`,
      ...(output?.trim() ? ["", "Errors:", "", fenced(tail(output))] : []),
    ].join("\n");
    return shorten(body, limit).text;
  }
  const failed = input.outcome !== "success" || input.jobStatus === "failure";
  const status = failed
    ? `❌ This plan${commit} fails the job${run}: see the plan below and the step's output.`
    : `Plan${commit}${run}.`;
  const top = [...head, status, ...(failed ? errors : []), ""].join("\n");
  const footer = (shown, whole) =>
    `\n\n---\n**Shortened:** this plan is ${whole.toLocaleString("en-US")} characters, over GitHub's comment limit ` +
    `(${COMMENT_LIMIT.toLocaleString("en-US")}); the first ${shown.toLocaleString("en-US")} are shown. The whole plan is ` +
    `\`reports/plan.md\` in this job's artifact \`${input.artifact}\`${run}.`;
  const room = limit - top.length - footer(limit, input.plan.length).length - 16;
  const { text, shortened } = shorten(input.plan, Math.max(0, room));
  return `${top}\n${text}${shortened ? footer(text.length, input.plan.length) : ""}`;
}

/**
 * The job summary's line: ✅ only for a job that succeeded. `posted` is false when the token could
 * not comment: the plan is then below the line, in the summary.
 */
function summaryLine({ stack, outcome, jobStatus, plan }, posted = true) {
  const where = posted ? "posted to the pull request" : "below (not posted: the token is read-only)";
  if (outcome === "success" && jobStatus !== "failure") {
    // A plan without credentials (a fork's) passes, but says it is partial here too.
    const partial = plan?.includes("**This plan is partial.**")
      ? " (partial: no credentials, so no preview of the stack's state and no scenario played; the plan lists what it checked)"
      : "";
    return `### ✅ Agent plan for stack \`${stack}\`: ${where}${partial}`;
  }
  const what = plan === undefined ? "no plan was written" : `the plan fails the job (${where})`;
  return `### ❌ Agent plan for stack \`${stack}\`: ${what}`;
}

/**
 * GitHub's answer to a write with a read-only token, which is what a fork's pull request gets
 * whatever the workflow's `permissions:` ask for: 403 "Resource not accessible by integration".
 */
const readOnlyToken = (error) =>
  error?.status === 403 && /Resource not accessible by integration/i.test(String(error.message));

const read = (file) => {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
};

/** Posts or replaces the stack's comment on the pull request and writes the job summary. */
async function postPlanComment({ github, context, core, env, dir = "reports" }) {
  const input = {
    stack: env.STACK,
    outcome: env.PLAN_OUTCOME ?? "",
    jobStatus: env.JOB_STATUS ?? "",
    plan: read(`${dir}/plan.md`),
    log: read(`${dir}/plan.log`),
    npmCiOutcome: env.NPM_CI_OUTCOME,
    npmCiLog: read(`${dir}/npm-ci.log`),
    sha: context.payload.pull_request?.head?.sha ?? context.sha,
    runUrl: `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/actions/runs/${context.runId}`,
    artifact: env.ARTIFACT,
  };
  const body = commentBody(input);
  const { owner, repo } = context.repo;
  const issue_number = context.issue.number;
  let summary = `${summaryLine(input)}\n`;
  try {
    const comments = await github.paginate(github.rest.issues.listComments, { owner, repo, issue_number });
    const previous = comments.find((c) => c.user?.type === "Bot" && c.body?.startsWith(marker(input.stack)));
    if (previous) await github.rest.issues.updateComment({ owner, repo, comment_id: previous.id, body });
    else await github.rest.issues.createComment({ owner, repo, issue_number, body });
  } catch (error) {
    if (!readOnlyToken(error)) throw error;
    // Not the plan's failure: the job's result stays the plan step's, and the plan is still shown.
    const why =
      `The plan for stack ${input.stack} could not be posted as a pull-request comment: this run's token is ` +
      "read-only (GitHub gives a fork's pull request a read-only token) and GitHub answered 403";
    core.warning(`${why}. The plan is in the job summary.`);
    summary = `${summaryLine(input, false)}\n\n> ${why}. What the comment would have said:\n\n${body}\n`;
  }
  await core.summary.addRaw(summary).write();
}

module.exports = { COMMENT_LIMIT, commentBody, summaryLine, postPlanComment };
