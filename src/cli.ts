// `agent-iac <command>`: the process entry. The command layer (src/commands, `runCli`) runs against
// the process's streams; the process's SIGINT and SIGTERM go to that run's lifecycle, and nowhere else.

// From the process's first moment: a signal that comes while the command layer loads (seconds on a
// busy machine) is held, and delivered to the run once it has claimed its reports (no earlier run's
// report outlives an interrupted run, however early the interruption).
const early: NodeJS.Signals[] = [];
const hold = (signal: NodeJS.Signals) => early.push(signal);
process.on("SIGINT", hold);
process.on("SIGTERM", hold);

const { processIO, runCli } = await import("./commands/index.ts");

// A closed stdout (`agent-iac procedures list --json | head -3`) ends the command quietly with exit
// 0, as Unix tools end: the reader has what it asked for; but a run with reports to write, or one
// being stopped, goes on without it (CommandIO.stdoutClosed). Any other write error is said once.
let io: ReturnType<typeof processIO> | undefined;
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  // The writes after the first failed one fail as a destroyed stream's.
  if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") {
    if (!io?.stdoutClosed()) process.exit(0);
    return;
  }
  process.stderr.write(`agent-iac: cannot write to stdout: ${error.code ?? error.message}\n`);
  process.exit(3);
});

io = processIO();
process.on("SIGINT", io.signal);
process.on("SIGTERM", io.signal);
process.off("SIGINT", hold);
process.off("SIGTERM", hold);
for (const signal of early) io.signal(signal);
process.exitCode = await runCli(process.argv.slice(2), io);
// The run's result is final, its reports written: a signal now only ends the process, with its code.
const exit = () => process.exit();
process.on("SIGINT", exit);
process.on("SIGTERM", exit);
process.off("SIGINT", io.signal);
process.off("SIGTERM", io.signal);
