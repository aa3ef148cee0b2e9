// `agent-iac audit`: which agent versions took calls in a window, and whose they are (src/watch).
import { emitReport } from "../report/index.ts";
import { auditStack } from "../usecases/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { reportFiles, TRAFFIC_REPORT_FLAGS, WINDOW_FLAGS } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";
import { runIO } from "./run-io.ts";
import { trafficInterrupted } from "./traffic.ts";

const SPEC = {
  name: "audit",
  about: `Reads every conversation created in the window and groups the calls by the agent version that
handled them: the stack's current versions, older versions of the stack's agents still taking calls
(after a replace: traffic that was not moved; named by key through the stack's update history;
one only test calls reached, such as agent-iac's own comparison calls, is listed apart),
agent ids this stack never held (created elsewhere, or left by an interrupted deploy), and current
versions with no calls. Test calls are counted apart. A bare report file name is written under reports/.`,
  flags: {
    stack: STACK_FLAG,
    ...WINDOW_FLAGS,
    baseline: {
      type: "string",
      arg: "FILE",
      help: "the versions before the release (as watch takes them): old versions of their keys, never unknown",
    },
    "fail-on-unknown": {
      type: "boolean",
      default: false,
      help: "exit 1 when an agent id this stack never held took calls",
    },
    ...TRAFFIC_REPORT_FLAGS,
  },
  footer: `connection: the stack's agents:baseUrl and agents:apiKey, else AGENT_IAC_BASE_URL and
AGENT_IAC_API_KEY; on a loopback address (the dev stack), the local dev key. The stack's update
history is read on a file backend (the default); on every backend the stack's previous_versions output
names the version each agent held before its last replace; older ones need --baseline or show as unknown.

exit codes: 0 done, 1 unknown agent ids took calls (with --fail-on-unknown), 2 usage or
configuration error, 3 the service or the backend failed.`,
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values } = parsed;
  const files = reportFiles(TRAFFIC_REPORT_FLAGS, values);
  const request = {
    project: io.project,
    stack: values.stack,
    window: { since: values.since, from: values.from, to: values.to },
    baseline: values.baseline,
    failOnUnknown: values["fail-on-unknown"],
  };
  const outcome = await auditStack(request, runIO(io)).catch(trafficInterrupted(io, files));
  await emitReport(outcome.report, { env: io.env, within: io.project.dir, files, out: io.stdout });
  // With --fail-on-unknown, the note names the unknown ids that fail the run.
  for (const note of outcome.notes) io.stderr.write(note);
  return outcome.code;
}
