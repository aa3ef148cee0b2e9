// The drift workflow's alert (.github/workflows/drift.yml, its github-script step): from one
// stack's drift report (reports/drift.json) it keeps ONE issue per stack, labelled agent-drift:
// drifted opens it (or comments on the one already open), holding closes it, inconclusive writes a
// note in the job summary and opens nothing. On a change of state (drifted with no issue open,
// holding with one open) it posts one Slack-compatible `{text}` message to the optional webhook
// (agents:alertWebhook): the stack, the state and the scenarios' names and counts — never a key, a
// transcript or an agent's words. It ends the step failed when the stack drifted or no report came.
const fs = require("node:fs");

const LABEL = "agent-drift";

/**
 * The stack's state from its report: drifted, holding, inconclusive, or error (no readable report,
 * or a scenario whose calls could not complete: drift's exit 3 is no verdict, never a green job).
 */
function driftState(report) {
  const scenarios = report?.drift?.scenarios;
  if (!Array.isArray(scenarios) || report.kind !== "drift") return "error";
  if (report.interrupted) return "error";
  if (scenarios.some((s) => s.verdict === "drifted")) return "drifted";
  if (scenarios.some((s) => s.verdict === "error")) return "error";
  if (scenarios.length > 0 && scenarios.every((s) => s.verdict === "holding")) return "holding";
  return "inconclusive";
}

/** `booking/books on ca_1@v2: drifted (baseline 40/40, now 4/8)` — names and counts only. */
function scenarioLine(s) {
  const counts = (c) => `${Number(c?.passes) || 0}/${Number(c?.calls) || 0}`;
  const moved = Array.isArray(s.moved) && s.moved.length > 0 ? `; moved: ${s.moved.map((m) => m.what).join(", ")}` : "";
  return `${s.agent}/${s.scenario} on ${s.version_id}: ${s.verdict} (baseline ${counts(s.baseline)}, now ${counts(s.now)}, ${s.calls_used} calls${moved})`;
}

function readReport(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

const title = (stack) => `Agent drift: stack ${stack}`;

/** The open agent-drift issue of this stack, if any (one per stack: matched by its title). */
async function openIssue(github, repo, stack) {
  const issues = await github.paginate(github.rest.issues.listForRepo, { ...repo, state: "open", labels: LABEL });
  return issues.find((issue) => issue.title === title(stack) && !issue.pull_request);
}

/** One message to the webhook; a failure is a warning, never the run's result. */
async function notify(webhook, text, core, post) {
  if (!webhook) return;
  try {
    const response = await post(webhook, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text }),
    });
    if (!response.ok) core.warning(`the alert webhook answered ${response.status}`);
  } catch (error) {
    core.warning(`the alert webhook could not be reached (${error?.cause?.code ?? error?.name ?? "error"})`);
  }
}

async function driftAlert({ github, context, core, env, post = fetch }) {
  const stack = env.STACK;
  const report = readReport(env.REPORT ?? "reports/drift.json");
  const state = driftState(report);
  const runUrl = `${context.serverUrl}/${context.repo.owner}/${context.repo.repo}/actions/runs/${context.runId}`;
  const lines = (report?.drift?.scenarios ?? []).map(scenarioLine);
  const body = [
    `agent-iac drift of stack \`${stack}\`: **${state}** ([run](${runUrl}))`,
    "",
    ...lines.map((l) => `- ${l}`),
  ].join("\n");
  const repo = { owner: context.repo.owner, repo: context.repo.repo };
  const open = state === "drifted" || state === "holding" ? await openIssue(github, repo, stack) : undefined;
  let changed = false;
  if (state === "drifted") {
    if (open) await github.rest.issues.createComment({ ...repo, issue_number: open.number, body });
    else {
      await github.rest.issues.create({ ...repo, title: title(stack), labels: [LABEL], body });
      changed = true;
    }
  } else if (state === "holding" && open) {
    await github.rest.issues.createComment({
      ...repo,
      issue_number: open.number,
      body: `${body}\n\nHolding again: closing.`,
    });
    await github.rest.issues.update({ ...repo, issue_number: open.number, state: "closed", state_reason: "completed" });
    changed = true;
  }
  if (changed) {
    const text = [`agent-iac drift: stack ${stack} is ${state}`, ...lines, runUrl].join("\n");
    await notify(env.ALERT_WEBHOOK, text, core, post);
  }
  const note =
    state === "inconclusive"
      ? "\n\nInconclusive: no issue was opened. Look at the report (a judge or caller that moved, a cap reached)."
      : state === "error" && report?.kind === "drift" && !report.interrupted
        ? "\n\nA call could not complete (the service's fault, not a verdict): no issue was opened or closed. See the report."
        : state === "error"
          ? "\n\nNo drift report: drift did not run to its end (a refusal after a deploy asks for a re-bless; see the log)."
          : "";
  await core.summary.addRaw(`${body}${note}\n`).write();
  if (state === "drifted" || state === "error") core.setFailed(`stack ${stack}: ${state}`);
  return state;
}

module.exports = { driftAlert, driftState, LABEL };
