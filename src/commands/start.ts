// `agent-iac start` (`npm start`), the main job: provision agents/ with `pulumi up` on the dev
// stack and smoke-call the versions it created, compared with the versions before the deploy.
// Flags → one typed request → the start use case (session, local service, deploy, smoke job; the
// report written through emitReport before the comparison base is settled) → the notes after it.
import path from "node:path";
import { emitReport } from "../report/index.ts";
import type { Report } from "../results/index.ts";
import { deployAndSmoke } from "../usecases/index.ts";
import { oneOf, parseCommand, STACK_FLAG } from "./args.ts";
import { START_REPORTS } from "./flags.ts";
import { type CommandIO, interrupted } from "./lifecycle.ts";
import { runIO } from "./run-io.ts";

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
  const { values, typed } = parsed;
  const request = {
    stack: values.stack,
    project: io.project,
    smoke: !values["no-smoke"],
    compare: { rule: typed["compare-rule"], allowInconclusive: values["allow-inconclusive"] },
  };
  // The report of a smoke phase that `pulumi up`'s cancel never let start is written, not shown.
  const writeReport = (report: Report, shown: boolean) =>
    emitReport(report, {
      env: io.env,
      within: io.project.dir,
      files: START_REPORTS,
      ...(shown ? { out: io.stdout } : {}),
    });
  const outcome = await deployAndSmoke(request, { ...runIO(io), writeReport });
  const { report } = outcome;
  if (!report) return outcome.code;
  // The report says whether the run was stopped (and where): a signal after it was made changes nothing.
  if (outcome.stopped !== undefined) {
    throw interrupted({ cwd: io.cwd, calls: report.results, reports: startReports(), phase: outcome.stopped });
  }
  for (const note of outcome.notes) io.stderr.write(note);
  return outcome.code;
}

const startReports = () => Object.values(START_REPORTS).map((file) => path.join("reports", file));
