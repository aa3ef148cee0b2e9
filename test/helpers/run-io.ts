// A command's run as a use case sees it (RunIO), for driving a use case directly: what it printed
// and warned, the connections it said it talks to, and an interruption a test can trigger (or one
// that came before the run, as a Ctrl+C while it opened the stack).
import type { RunIO } from "../../src/usecases/index.ts";

export type FakeRun = {
  io: RunIO;
  /** Everything the run wrote to its progress output. */
  out(): string;
  /** Everything it warned (the command's stderr, live). */
  warned(): string;
  /** The service addresses it said it talks to. */
  connections: (string | undefined)[];
  /** Aborts the run's interruption (as SIGINT would), taken or not yet. */
  stop(): void;
};

export function fakeRun(options: { stopped?: boolean } = {}): FakeRun {
  const out: string[] = [];
  const warned: string[] = [];
  const connections: (string | undefined)[] = [];
  const controller = new AbortController();
  const stop = () => controller.abort(new Error("interrupted by SIGINT"));
  if (options.stopped) stop();
  return {
    io: {
      out: { write: (text: string) => out.push(text) },
      warn: (text) => warned.push(text),
      useConnection: (connection) => connections.push(connection.baseUrl),
      interruption: () => ({ signal: controller.signal, release: () => undefined }),
      interrupts: () => () => undefined,
    },
    out: () => out.join(""),
    warned: () => warned.join(""),
    connections,
    stop,
  };
}
