// `start`'s workflow (`npm start`): the stack opened (invalid agent files stop it before anything is
// deployed) → the service it uses (the local simulator where nothing answers on the dev stack's
// loopback address) → the checks before the deploy → `pulumi up` → the smoke job against the
// versions it created, compared with the versions before it → the comparison base settled, and what
// the run says after its report (versions the service did not know, failed post_url deliveries).

import { displayUrl } from "../api/index.ts";
import type { CompareRule } from "../compare/index.ts";
import { InterruptedError } from "../errors/index.ts";
import { terminalText } from "../escape/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { type Report, reportExitCode } from "../results/index.ts";
import type { ProjectContext } from "../settings/index.ts";
import { type Deployed, deploy, notRunAfterUp, settleComparisonBase } from "./deploy.ts";
import { failedDeliveries, type LocalService, localService } from "./local-service.ts";
import type { CommandOutcome, RunIO } from "./outcome.ts";
import { checkBeforeDeploy } from "./preflight.ts";
import type { StackSession } from "./session.ts";
import type { SimulatorDelivery } from "./simulator-admin.ts";
import { runSmokeJob, smokeJobFrom } from "./smoke-job.ts";
import { openValidStack, planHeld } from "./smoke-prologue.ts";
import { unknownVersionsNote } from "./unknown-versions.ts";

export type StartRequest = {
  stack: string;
  project: ProjectContext;
  /** Place the smoke calls after the deploy (`--no-smoke`: provision only). */
  smoke: boolean;
  compare: { rule?: CompareRule | undefined; allowInconclusive: boolean };
};

/**
 * `report`: the smoke phase's (none with `smoke: false`). A stopped run's report lists every call
 * (`interrupted`); `stopped` then says in which phase, and `deployed` whether `pulumi up` completed
 * (a report of calls that never ran because the up was cancelled is written, not shown).
 */
export type StartOutcome = CommandOutcome<Report> & { stopped?: string; deployed: boolean };

/**
 * The run, and the writer of its report (the command's: its files, and the terminal when `shown`).
 * The report is written before the comparison base it was compared against is consumed, so a report
 * that could not be written leaves the base for the next run.
 */
export type StartIO = RunIO & { writeReport: (report: Report, shown: boolean) => Promise<unknown> };

export async function deployAndSmoke(request: StartRequest, io: StartIO): Promise<StartOutcome> {
  const session = await openValidStack(
    request.stack,
    { project: request.project, create: true, consequence: "; nothing was deployed" },
    io.warn,
  );
  // The service's errors (a refused key in the smoke phase too) are said in the stack's terms.
  io.useConnection(session.connection);
  // From here a signal stops this run cleanly, whatever its phase: up, smoke or compare.
  const stop = io.interruption();
  let service: LocalService | undefined;
  try {
    service = await localService(request.project, session.connection, request.stack, (line) =>
      io.out.write(`${line}\n`),
    );
    await checkBeforeDeploy(session, service, { smoke: request.smoke });
    const log = { log: (text: string) => io.out.write(text), color: Boolean(io.out.isTTY) };
    const deployed = await deploy(session, service, { ...log, signal: stop.signal, interrupts: io.interrupts }).catch(
      (error: unknown) => {
        if (error instanceof InterruptedError && request.smoke) return error;
        throw error;
      },
    );
    if (deployed instanceof InterruptedError) return await interruptedDuringUp(deployed, session, io);
    io.out.write(`\n${deployed.changed ? "Changes applied." : "No changes."}\n${agentTable(deployed.held.agents)}\n`);
    if (!request.smoke) return { report: undefined, notes: [], code: 0, deployed: true };
    return await smokeAfterUp(session, service, deployed, { io, signal: stop.signal, compare: request.compare });
  } finally {
    stop.release();
    // Last: the Pulumi run (and its provider) has stopped using it by now.
    await service?.close();
  }
}

/**
 * `pulumi up` was cancelled (or never started): the report of the smoke phase that will not run
 * lists every scenario as not run, from the plan (pinned to what the stack holds, where it holds the
 * agent), replacing an earlier run's. Nothing to plan: the Pulumi run's own error.
 */
async function interruptedDuringUp(error: InterruptedError, session: StackSession, io: StartIO): Promise<StartOutcome> {
  const report = await notRunAfterUp(session);
  if (!report) throw error;
  await io.writeReport(report, false);
  return { report, notes: [], code: reportExitCode(report), stopped: error.what, deployed: false };
}

async function smokeAfterUp(
  session: StackSession,
  service: LocalService,
  deployed: Deployed,
  { io, signal, compare }: { io: StartIO; signal: AbortSignal; compare: StartRequest["compare"] },
): Promise<StartOutcome> {
  const { held, base } = deployed;
  const plan = await planHeld(session, held, { selection: {} }, io.warn);
  const comparing = Object.keys(base).length > 0;
  io.out.write(
    comparing
      ? "\nsmoke calls against the pinned versions, compared with the versions before this deploy:\n"
      : "\nsmoke calls against the pinned versions (first deploy: no versions before it to compare with, plain smoke):\n",
  );
  const old = { versions: base, source: "outputs" as const };
  const job = smokeJobFrom(session, {
    plan,
    placement: comparing ? { kind: "compare", old, failOn: "failure", ...compare } : { kind: "smoke" },
    concurrency: 4,
    connection: () => service.connection,
  });
  const result = await runSmokeJob(job, { out: io.out, signal, onRetry: io.onRetry });
  if (result.kind !== "ran") return { report: undefined, notes: [], code: 0, deployed: true };
  const { report } = result;
  await io.writeReport(report, true);
  // The report says whether the run was stopped: a signal after it was made changes nothing.
  if (report.interrupted) {
    const stopped = "after `pulumi up` completed: the agents are deployed";
    return { report, notes: [], code: reportExitCode(report), stopped, deployed: true };
  }
  const notes = [unknownVersionsNote(result.results, held.agents, session.name)];
  await settleComparisonBase(session, report);
  if (service.simulated) notes.push(await failedDeliveriesNote(service, [...result.results, ...result.oldResults]));
  return { report, notes: notes.filter(Boolean), code: reportExitCode(report), deployed: true };
}

/**
 * The procedures' post_url deliveries that failed during this run's calls, from the simulator's own
 * list (on stderr: stdout ends with smoke's "N passed, N failed"). A delivery is the procedural
 * agent's output reaching its hook; the procedure itself still completes, so nothing else says so.
 */
async function failedDeliveriesNote(
  service: LocalService,
  results: { conversationId?: string | null | undefined }[],
): Promise<string> {
  const conversations = new Set(results.flatMap((r) => (r.conversationId ? [r.conversationId] : [])));
  const { failed, total } = await failedDeliveries(service.connection, conversations);
  return failedDeliveriesText(failed, total);
}

/**
 * The failed deliveries as said on stderr: a hook's address without its query or credentials (a
 * post_url may carry a token), the service's words escaped for the terminal; "" when none failed.
 */
export function failedDeliveriesText(failed: SimulatorDelivery[], total: number): string {
  if (failed.length === 0) return "";
  const line = (d: SimulatorDelivery) =>
    `  ${terminalText(d.procedure_id)} → ${terminalText(displayUrl(d.url))}: ${terminalText(d.error ?? `HTTP ${d.status}`)}`;
  const more = failed.length > 10 ? [`  … and ${failed.length - 10} more (GET /_simulator/deliveries)`] : [];
  return `post_url deliveries: ${failed.length} of ${total} failed (this run's procedures, which still completed):\n${[...failed.slice(0, 10).map(line), ...more].join("\n")}\n`;
}

function agentTable(outputs: Record<string, HeldAgent>): string {
  const rows = Object.entries(outputs).map(([key, agent]) => [key, agent.kind, agent.version_id, agent.name]);
  const header = ["agent", "kind", "version id", "name"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
