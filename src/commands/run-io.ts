// A command's run as its use case sees it (src/usecases/outcome.ts RunIO): progress on stdout (or
// where the command says), warnings and retries on stderr, its signals and its connection.
import type { RunIO } from "../usecases/index.ts";
import type { CommandIO, Output } from "./lifecycle.ts";

export function runIO(io: CommandIO, out: Output = io.stdout): RunIO {
  return {
    out,
    warn: (text) => io.stderr.write(text),
    onRetry: io.printRetry,
    useConnection: (connection) => io.useConnection(connection),
    interruption: () => io.interruption(),
    interrupts: io.onInterrupt,
  };
}
