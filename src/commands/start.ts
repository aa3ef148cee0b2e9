// `agent-iac start` (`npm start`), the main job: provision agents/ with `pulumi up` on the dev
// stack and smoke-call the versions it created, compared with the versions before the deploy.
// Flags → the stack session → the local service → deploy → the smoke job → emitReport.
import path from "node:path";
import { InterruptedError } from "../errors/index.ts";
import type { HeldAgent } from "../provider/index.ts";
import { emitReport } from "../report/index.ts";
import {
  checkBeforeDeploy,
  type Deployed,
  deploy,
  failedDeliveries,
  type LocalService,
  localService,
  notRunAfterUp,
  openValidStack,
  planHeld,
  runSmokeJob,
  type StackSession,
  settleComparisonBase,
  unknownVersionsNote,
} from "../usecases/index.ts";
import { oneOf, parseCommand, STACK_FLAG } from "./args.ts";
import { START_REPORTS } from "./flags.ts";
import { type CommandIO, interrupted } from "./lifecycle.ts";

const SPEC = {
  name: "start",
  about: `Runs \`pulumi up --yes\` for agents/ on the stack, prints the agents and their version ids, then
places the smoke scenarios against those versions. Before the up it checks the service: when the
stack's agents:baseUrl is a loopback address (as in the dev stack), a simulator already serving it
(\`npm run service\`) is used only if it knows every agent the stack holds (else exit 2, nothing
deployed), and any other service answering there is used as the stack's service; where nothing
answers, the dev stack's run is served by the local simulator on a free port (its data in
.agent-iac/simulator.json) with the local dev key, and any other stack stops with exit 2. Ctrl+C
(or SIGTERM) cancels the Pulumi run cleanly: the operations in flight finish and the stack is left
unlocked.`,
  flags: {
    stack: STACK_FLAG,
    "no-smoke": { type: "boolean", default: false, help: "provision only; place no smoke calls" },
    "compare-rule": {
      type: "string",
      arg: "RULE",
      value: oneOf(["fixed", "sequential"]),
      help: "decide the comparison with the versions before the deploy by this rule for every scenario (default: each scenario's compare:, else fixed; see smoke --help)",
    },
    "allow-inconclusive": {
      type: "boolean",
      default: false,
      help: "a sequential comparison that reached its cap undecided does not fail the run",
    },
  },
  footer: `exit codes: 0 done, 1 a smoke expectation failed or the agent files are invalid (nothing is
deployed then), 2 usage or configuration error, 3 the service or the backend failed (including a
failed \`pulumi up\`), 130 interrupted.`,
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const stackName = parsed.values.stack;
  const smoke = !parsed.values["no-smoke"];
  const warn = (text: string) => io.stderr.write(text);
  // Invalid agent files stop the run before anything is deployed.
  const session = await openValidStack(
    stackName,
    { project: io.project, create: true, consequence: "; nothing was deployed" },
    warn,
  );
  // The service's errors (a refused key in the smoke phase too) are said in the stack's terms.
  io.useConnection(session.connection);
  // From here a signal stops this run cleanly, whatever its phase: up, smoke or compare.
  const stop = io.interruption();
  let service: LocalService | undefined;
  try {
    service = await localService(io.project, session.connection, stackName, (line) => io.stdout.write(`${line}\n`));
    await checkBeforeDeploy(session, service, { smoke });
    const log = { log: (text: string) => io.stdout.write(text), color: Boolean(io.stdout.isTTY) };
    const deployed = await deploy(session, service, { ...log, signal: stop.signal, interrupts: io.onInterrupt }).catch(
      async (error: unknown) => {
        if (error instanceof InterruptedError && smoke) throw await interruptedDuringUp(error, session, io);
        throw error;
      },
    );
    io.stdout.write(
      `\n${deployed.changed ? "Changes applied." : "No changes."}\n${agentTable(deployed.held.agents)}\n`,
    );
    if (!smoke) return 0;
    const compare = { rule: parsed.typed["compare-rule"], allowInconclusive: parsed.values["allow-inconclusive"] };
    return await smokeAfterUp(session, service, deployed, { io, signal: stop.signal, compare });
  } finally {
    stop.release();
    // Last: the Pulumi run (and its provider) has stopped using it by now.
    await service?.close();
  }
}

async function smokeAfterUp(
  session: StackSession,
  service: LocalService,
  deployed: Deployed,
  {
    io,
    signal,
    compare,
  }: {
    io: CommandIO;
    signal: AbortSignal;
    compare: { rule?: "fixed" | "sequential" | undefined; allowInconclusive: boolean };
  },
): Promise<number> {
  const { held, base } = deployed;
  const plan = await planHeld(session, held, { selection: {} }, (text) => io.stderr.write(text));
  const comparing = Object.keys(base).length > 0;
  io.stdout.write(
    comparing
      ? "\nsmoke calls against the pinned versions, compared with the versions before this deploy:\n"
      : "\nsmoke calls against the pinned versions (first deploy: no versions before it to compare with, plain smoke):\n",
  );
  const job = {
    stack: session.name,
    project: session.project,
    plan,
    placement: comparing
      ? {
          kind: "compare" as const,
          old: { versions: base, source: "outputs" as const },
          failOn: "failure" as const,
          ...compare,
        }
      : { kind: "smoke" as const },
    concurrency: 4,
    judge: { settings: session.judge },
    caller: session.caller,
    connection: () => service.connection,
  };
  const result = await runSmokeJob(job, { out: io.stdout, signal, onRetry: io.printRetry });
  if (result.kind !== "ran") return 0;
  const exitCode = await emitReport(result.report, {
    env: io.env,
    within: io.project.dir,
    files: START_REPORTS,
    out: io.stdout,
  });
  // The report says whether the run was stopped: a signal after it was made changes nothing.
  if (result.report.interrupted) {
    const calls = result.report.results;
    const phase = "after `pulumi up` completed: the agents are deployed";
    throw interrupted({ calls, reports: startReports(), phase });
  }
  io.stderr.write(unknownVersionsNote(result.results, held.agents, session.name));
  await settleComparisonBase(session, result.report);
  if (service.simulated) await reportFailedDeliveries(service, [...result.results, ...result.oldResults], io);
  return exitCode;
}

const startReports = () => Object.values(START_REPORTS).map((file) => path.join("reports", file));

/**
 * The procedures' post_url deliveries that failed during this run's calls, from the simulator's own
 * list (on stderr: stdout ends with smoke's "N passed, N failed"). A delivery is the procedural
 * agent's output reaching its hook; the procedure itself still completes, so nothing else says so.
 */
async function reportFailedDeliveries(
  service: LocalService,
  results: { conversationId?: string | null | undefined }[],
  io: CommandIO,
): Promise<void> {
  const conversations = new Set(results.flatMap((r) => (r.conversationId ? [r.conversationId] : [])));
  const { failed, total } = await failedDeliveries(service.connection, conversations);
  if (failed.length === 0) return;
  const lines = failed.slice(0, 10).map((d) => `  ${d.procedure_id} → ${d.url}: ${d.error ?? `HTTP ${d.status}`}`);
  const more = failed.length > 10 ? [`  … and ${failed.length - 10} more (GET /_simulator/deliveries)`] : [];
  io.stderr.write(
    `post_url deliveries: ${failed.length} of ${total} failed (this run's procedures, which still completed):\n${[...lines, ...more].join("\n")}\n`,
  );
}

/**
 * `pulumi up` was cancelled (or never started): the smoke reports of this run list every scenario
 * as not run, from the plan (pinned to what the stack holds, where it holds the agent), replacing
 * an earlier run's; then the one line.
 */
async function interruptedDuringUp(error: InterruptedError, session: StackSession, io: CommandIO): Promise<unknown> {
  const report = await notRunAfterUp(session);
  if (!report) return error; // nothing to plan: the Pulumi run's own line
  await emitReport(report, { env: io.env, within: io.project.dir, files: START_REPORTS });
  return interrupted({ calls: report.results, reports: startReports(), phase: error.what });
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
