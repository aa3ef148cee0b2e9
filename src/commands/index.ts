// The command layer's one entry: `runCli(argv, io)` runs `agent-iac <command>` against a CommandIO
// (its output streams and its run's lifecycle: in-process in tests, the process's in src/cli.ts)
// and returns the exit code (0 ok, 1 failed check, 2 usage or configuration error, 3 service or
// backend failure, 130 interrupted). Each command exports `run(argv, io)` and returns its result's
// exit code; it stops early on a usage error by throwing a CliError, and the folders below throw
// the error model's typed errors (src/errors, the service client's ApiError). This is the one
// place that prints errors, and ./errors.ts the one mapping from an error's code to its exit code,
// from its fields to flags, and of the service's errors to the connection's terms.
import { InterruptedError } from "../errors/index.ts";
import { cliOutcome, isKnownError } from "./errors.ts";
import {
  askedReportFiles,
  PLAN_REPORT_FLAGS,
  RUN_REPORT_FLAGS,
  startReportFiles,
  TRAFFIC_REPORT_FLAGS,
  TRY_REPORT_FLAGS,
} from "./flags.ts";
import { type CommandIO, processIO } from "./lifecycle.ts";

export { CommandIO, processIO } from "./lifecycle.ts";

type Command = {
  summary: string;
  load: () => Promise<{ run(argv: string[], io: CommandIO): Promise<number> }>;
  /** The operator commands share one module, which takes the command name as its first argument. */
  withName?: boolean;
  /** The report files its arguments ask for (`cwd`: the run's): claimed (an earlier run's removed) before it loads. */
  reports?: (argv: readonly string[], cwd: string) => string[];
};

const commands: Record<string, Command> = {
  start: {
    summary: "provision agents/ against the stack (the local simulator by default) and smoke-call them",
    load: () => import("./start.ts"),
    reports: startReportFiles,
  },
  validate: { summary: "check agents/*.yaml offline; file:line errors", load: () => import("./validate.ts") },
  schema: {
    summary: "write the JSON Schema of agent files (agents/agent.schema.json)",
    load: () => import("./schema.ts"),
  },
  plan: {
    summary: "preview a stack and render a reviewable plan (Markdown, JSON)",
    load: () => import("./plan.ts"),
    reports: (argv) => askedReportFiles(PLAN_REPORT_FLAGS, argv),
  },
  smoke: {
    summary: "place smoke test calls against the stack's pinned version ids",
    load: () => import("./smoke.ts"),
    // A previous report given as the old side is read, not replaced.
    reports: (argv, cwd) => askedReportFiles(RUN_REPORT_FLAGS, argv, { flags: ["compare"], cwd }),
  },
  try: {
    summary: "try config variants of an agent side by side on its deployed version, ranked with evidence",
    load: () => import("./try.ts"),
    reports: (argv) => askedReportFiles(TRY_REPORT_FLAGS, argv),
  },
  judge: {
    summary:
      "measure the configured judge against labels (judge check FILE), make them (judge label REPORT|RECORDINGS)",
    load: () => import("./judge.ts"),
  },
  report: {
    summary: "merge the JSON reports of sharded smoke runs",
    load: () => import("./report.ts"),
    reports: (argv, cwd) => askedReportFiles(RUN_REPORT_FLAGS, argv, { positionals: true, cwd }),
  },
  baseline: {
    summary: "bless smoke reports as the stack's baseline (baselines/<stack>.json)",
    load: () => import("./baseline.ts"),
  },
  drift: {
    summary: "are the blessed versions still as good as their baseline? drifted, holding or inconclusive",
    load: () => import("./drift.ts"),
    reports: (argv) => askedReportFiles(RUN_REPORT_FLAGS, argv),
  },
  scenario: {
    summary: "scenarios for the agent file: a real call replayed (capture), or written by a model (derive, generate)",
    load: () => import("./scenario.ts"),
  },
  service: { summary: "run the local simulator of the service", load: () => import("./service.ts") },
  watch: {
    summary: "live traffic of the current versions against the previous ones; exit 1 when a figure got worse",
    load: () => import("./watch.ts"),
    reports: (argv) => askedReportFiles(TRAFFIC_REPORT_FLAGS, argv),
  },
  audit: {
    summary: "which agent versions take calls: current, older versions of ours, unknown ids",
    load: () => import("./audit.ts"),
    reports: (argv) => askedReportFiles(TRAFFIC_REPORT_FLAGS, argv),
  },
  conversations: {
    summary: "list conversations, or a conversation's procedures",
    load: () => import("./operate.ts"),
    withName: true,
  },
  procedures: { summary: "list procedures", load: () => import("./operate.ts"), withName: true },
  feedbacks: { summary: "list feedbacks", load: () => import("./operate.ts"), withName: true },
  events: {
    summary: "follow a conversation's event stream",
    load: () => import("./operate.ts"),
    withName: true,
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((name) => name.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return (
    "usage: agent-iac <command> [options]   (agent-iac <command> --help for its options)\n\n" +
    `commands:\n${lines.join("\n")}\n\n` +
    "--debug (or AGENT_IAC_DEBUG=1) prints the stack of an unexpected error.\n"
  );
}

type Outcome = {
  exitCode: number;
  message: string;
  hint?: string | undefined;
  /** Said before the labelled message (each invalid file's file:line). */
  details?: string | undefined;
  bug?: boolean;
};

/** The one place that turns an error into an exit code and a message. */
function classify(error: unknown, io: CommandIO): Outcome {
  if (isKnownError(error)) return cliOutcome(error, io.env, io.connection);
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { exitCode: 3, message: `this is a bug: ${message}`, bug: true };
}

async function report(label: string, error: unknown, debug: boolean, io: CommandIO): Promise<number> {
  const outcome = classify(error, io);
  if (error instanceof InterruptedError) {
    // An interrupted run ends with its one line (what finished, where the reports are).
    io.stderr.write(`${error.message}\n`);
    return outcome.exitCode;
  }
  // Messages quote the service: its control characters are shown escaped, never obeyed.
  const { terminalLines } = await import("../render/index.ts");
  let text = outcome.details ? `${terminalLines(outcome.details)}\n` : "";
  text += `${label}: ${terminalLines(outcome.message)}\n`;
  if (outcome.hint) text += `\n${terminalLines(outcome.hint.trimEnd())}\n`;
  if (outcome.bug) {
    text += debug
      ? `${error instanceof Error ? error.stack : ""}\n`
      : "(run again with --debug, or AGENT_IAC_DEBUG=1, to see where it happened)\n";
  } else if (debug && error instanceof Error && error.stack) {
    text += `${error.stack}\n`;
  }
  io.stderr.write(text);
  return outcome.exitCode;
}

export async function runCli(argv: string[], io: CommandIO = processIO()): Promise<number> {
  // The Pulumi program run by start and plan reads it too (in the run's environment): with it, it keeps stack traces.
  if (argv.includes("--debug")) io.enableDebug();
  const debug = io.debug;
  const [name, ...rest] = argv.filter((arg) => arg !== "--debug");
  const command = name && Object.hasOwn(commands, name) ? commands[name] : undefined;
  // The run's first moment: no earlier run's report outlives it, whatever ends it (a signal too).
  await io.claimReports(command?.reports?.(rest, io.cwd) ?? []);
  if (!name || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(usage());
    return name ? 0 : 2;
  }
  if (!command) {
    const { suggestion } = await import("./args.ts");
    io.stderr.write(`agent-iac: unknown command "${name}"${suggestion(name, Object.keys(commands))}\n\n${usage()}`);
    return 2;
  }
  const label = command.withName && rest[0] && !rest[0].startsWith("-") ? `${name} ${rest[0]}` : name;
  // Every command runs in its run's lifecycle: signals and the service's errors (its use cases
  // open and close their own clients).
  try {
    const module = await command.load();
    return await module.run(command.withName ? [name, ...rest] : rest, io);
  } catch (error) {
    return report(`agent-iac ${label}`, error, debug, io);
  }
}
