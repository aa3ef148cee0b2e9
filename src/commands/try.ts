// `agent-iac try AGENT --variant …`: config variants of one agent played beside its config on the
// version the stack holds (src/usecases try.ts) → emitReport (kind try); --promote writes one into
// the agent file and prints the diff.
import { CliError } from "../errors/index.ts";
import { terminalLines } from "../render/index.ts";
import { emitReport } from "../report/index.ts";
import { COMPARE_DEFAULTS_FOR_TRY, tryVariants, type VariantSpec } from "../usecases/index.ts";
import { concurrencyFlag, oneOf, parseCommand, positiveNumber, STACK_FLAG, wholeNumber } from "./args.ts";
import { JUDGE_FLAGS, JUDGE_HELP, judgeCache, reportFiles, TRY_REPORT_FLAGS } from "./flags.ts";
import { type CommandIO, interrupted } from "./lifecycle.ts";

const SPEC = {
  name: "try",
  about: `Tries config variants of one conversational agent before anything is deployed: each variant (a
partial config, --variant NAME=FILE, or a \`variants:\` entry of the agent file, --variant NAME) is
played as override_config on the version the stack holds, beside the unchanged config (the base),
in rounds of interleaved test calls (livemode: false) with the same caller lines on every side.
Each variant gets a verdict against the base — better, worse, no worse (within --margin, earned)
or inconclusive at --max-pairs — from sequential paired tests valid at every look, Holm-corrected
across the variants; a variant stops once decided. The ranking says first with evidence only when
the evidence says so. Nothing is created.`,
  positionals: { min: 1, max: 1, what: "an agent key" },
  flags: {
    stack: STACK_FLAG,
    variant: {
      type: "string",
      multiple: true,
      arg: "NAME[=FILE]",
      help: "a variant: NAME=FILE (a partial config in YAML) or NAME (the agent file's variants.NAME); repeat for more",
    },
    scenario: { type: "string", multiple: true, arg: "NAME", help: "only this scenario (default: all of the agent's)" },
    concurrency: concurrencyFlag(),
    alpha: {
      type: "string",
      arg: "A",
      value: positiveNumber("a significance level between 0 and 0.5 (e.g. 0.05)", 0.5),
      help: `each verdict's error, Holm-corrected across the variants (default ${COMPARE_DEFAULTS_FOR_TRY.alpha})`,
    },
    margin: {
      type: "string",
      arg: "M",
      value: positiveNumber("a pass-rate drop between 0 and 1 (e.g. 0.1)", 1),
      help: `the pass-rate drop a variant may have and still be "no worse" (default ${COMPARE_DEFAULTS_FOR_TRY.margin})`,
    },
    "max-pairs": {
      type: "string",
      arg: "N",
      value: wholeNumber(1),
      help: `pairs per variant before it is inconclusive (default ${COMPARE_DEFAULTS_FOR_TRY.maxPairs})`,
    },
    "fail-on": { type: "string", arg: "worse", value: oneOf(["worse"]), help: "exit 1 when a variant is worse" },
    promote: {
      type: "string",
      arg: "NAME",
      help: "write variant NAME into the agent file (comments kept) and print the diff, if it is decided no worse or better",
    },
    "dry-run": {
      type: "boolean",
      default: false,
      help: "print every call the cap allows on every side and the worst-case call minutes; place none",
    },
    "max-call-minutes": {
      type: "string",
      arg: "M",
      value: positiveNumber("a positive number of minutes"),
      help: "refuse (exit 2, before any call) a worst case (every side up to --max-pairs) over M minutes",
    },
    ...TRY_REPORT_FLAGS,
    ...JUDGE_FLAGS,
  },
  footer: `What cannot be tried is refused before any call (exit 2): removing a field or section (null in a
variant), name, description, postprocess_agents, a new agent (the stack holds no version of it), and
an agent file that differs from what the stack holds (deploy first, or give the change as a variant).

${JUDGE_HELP}

exit codes: 0 tried (whatever the verdicts), 1 a variant is worse with --fail-on worse, or a variant
or agent file is invalid, 2 usage or configuration error (what cannot be tried, a worst case over
--max-call-minutes), 3 a variant had no pair that could be judged, or the service failed, 130 interrupted.`,
} as const;

/** `NAME=FILE` or `NAME`. */
function variantSpecs(values: readonly string[] | undefined): VariantSpec[] {
  if (!values || values.length === 0) throw new CliError("name at least one --variant NAME=FILE or --variant NAME");
  return values.map((text) => {
    const at = text.indexOf("=");
    const name = at < 0 ? text : text.slice(0, at);
    if (!/^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(name)) {
      throw new CliError(`--variant ${JSON.stringify(text)}: NAME must be lowercase letters, digits and single dashes`);
    }
    return at < 0 ? { name } : { name, file: text.slice(at + 1) };
  });
}

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values, typed, positionals } = parsed;
  const files = reportFiles(TRY_REPORT_FLAGS, values);
  const stop = io.interruption();
  const result = await tryVariants(
    {
      stack: values.stack,
      project: io.project,
      agent: positionals[0] as string,
      variants: variantSpecs(values.variant),
      scenarios: values.scenario,
      rule: {
        alpha: typed.alpha ?? COMPARE_DEFAULTS_FOR_TRY.alpha,
        margin: typed.margin ?? COMPARE_DEFAULTS_FOR_TRY.margin,
        maxPairs: typed["max-pairs"] ?? COMPARE_DEFAULTS_FOR_TRY.maxPairs,
      },
      concurrency: typed.concurrency,
      maxCallMinutes: typed["max-call-minutes"],
      dryRun: values["dry-run"],
      failOn: typed["fail-on"] ?? null,
      promote: values.promote,
      judgeCache: judgeCache(values),
      onConnection: (connection) => io.useConnection(connection),
    },
    { out: io.stdout, signal: stop.signal, onRetry: io.printRetry, warn: (text) => io.stderr.write(text) },
  ).finally(stop.release);
  if (result.kind === "dry-run") return 0;
  const code = await emitReport(result.report, { env: io.env, within: io.project.dir, files, out: io.stdout });
  if (result.report.interrupted)
    throw interrupted({ cwd: io.cwd, calls: result.report.results, reports: Object.values(files) });
  if (result.promoted && "refused" in result.promoted) io.stderr.write(`${result.promoted.refused}\n`);
  else if (result.promoted)
    io.stdout.write(terminalLines(`promoted into ${result.promoted.file}:\n${result.promoted.diff}`));
  return code;
}
