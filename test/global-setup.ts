// The whole run's setup and teardown: marks the run's environment, and afterwards fails the run
// when a process started by it is still alive (a simulator still listening, an orphaned Pulumi
// plugin), naming each with its ports, and stops it. See helpers/leaks.ts.
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describeLeaks, leftBehind, packDirectory, RUN_MARK } from "./helpers/leaks.ts";

export default function setup() {
  const mark = randomUUID();
  process.env[RUN_MARK] = mark;
  // The judge cache signs with the user's machine key unless this is set: a run of tests never
  // creates or uses the developer's ~/.config/agent-iac/judge-cache.key (cache-key.test.ts covers it).
  process.env.AGENT_IAC_JUDGE_CACHE_KEY ??= randomUUID();
  // V8's compiled code kept between processes: the workers (set before they start), the CLIs the
  // tests spawn and every Pulumi program and provider start about twice as fast. Correctness never
  // depends on it: a clean machine's first run fills it.
  process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), "agent-iac-test-compile-cache");
  return async () => {
    // The run's one packed tarball (helpers/packed.ts).
    await rm(packDirectory(mark), { recursive: true, force: true });
    // Workers and their children get a moment to finish exiting.
    const leaks = await leftBehind(mark);
    if (leaks.length === 0) return;
    for (const leak of leaks) {
      try {
        process.kill(leak.pid, "SIGTERM");
      } catch {}
    }
    // Vitest only logs an error thrown here ("error during close") and exits 0: set the code too.
    process.exitCode = 1;
    throw new Error(`the test run left ${leaks.length} process(es) running (now stopped):\n${describeLeaks(leaks)}`);
  };
}
