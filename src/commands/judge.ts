// `agent-iac judge check FILE`: measures the configured judge against transcripts a person
// labelled. (The judge a run needs is set up by the smoke job: src/usecases/judge.ts.)
import { CliError } from "../errors/index.ts";
import {
  agreementLine,
  type CheckResult,
  calibrations,
  checkJudge,
  DEFAULT_CACHE_DIR,
  Judge,
  JudgeClient,
  MIN_CALIBRATION_ITEMS,
  oneVerdictOnly,
  readLabelledFile,
  VoteCache,
} from "../judge/index.ts";
import { terminalText, writeJsonFile } from "../report/index.ts";
import { requireJudge, resolveJudge } from "../settings/index.ts";
import { recordingTranscript } from "../smoke/index.ts";
import { openSession } from "../usecases/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { JUDGE_FLAGS, JUDGE_HELP } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

const round = (x: number) => Math.round(x * 1000) / 1000;

const CHECK_SPEC = {
  name: "judge check",
  synopsis: "FILE [options]",
  about: `Runs the configured judge over transcripts a person labelled (FILE: YAML, items of rubric,
transcript lines or a recording, and the human's verdict) and reports, per rubric and overall, how
often the judge agrees with the labels, Cohen's kappa with its 95 % interval, the share of each human
verdict, the confusion matrix and how often the judge's own votes on one item disagree (its flip
rate). The results are stored in the judge cache directory: scenarios may require them
(judge_min_agreement, judge_min_kappa), and smoke reports show each rubric's last measured agreement.`,
  flags: {
    stack: STACK_FLAG,
    json: { type: "string", arg: "FILE", help: "write the results as JSON" },
    ...JUDGE_FLAGS,
  },
  positionals: { min: 1, max: 1, what: "the labelled file" },
  footer: `${JUDGE_HELP}

exit codes: 0 measured, 2 usage or configuration error (the file, no judge configured), 3 an item
could not be judged (the judge's answer unreadable, a timeout, retries exhausted).`,
} as const;

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "check") {
    if (sub === "--help" || sub === "-h" || sub === undefined) {
      io.stdout.write("usage: agent-iac judge check FILE [options]   (agent-iac judge check --help)\n");
      return sub === undefined ? 2 : 0;
    }
    throw new CliError(`unknown judge command "${sub}": the one command is \`agent-iac judge check FILE\``);
  }
  const parsed = parseCommand(CHECK_SPEC, rest, io.stdout);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const file = positionals[0] as string;
  const labelled = await readLabelledFile(file);
  // The stack's judge settings (its file's where it is not created); the environment's where neither reads.
  const stack = await openSession(values.stack, { project: io.project, source: "stack-or-file" }).catch(
    () => undefined,
  );
  const settings = stack?.judge ?? resolveJudge(() => undefined, io.env);
  const endpoint = requireJudge(settings, `judge check ${file}`, values.stack);
  const cache = new VoteCache(values["judge-cache"] ?? DEFAULT_CACHE_DIR, { read: !values["no-judge-cache"] });
  await cache.refuseTracked();
  const judge = new Judge(new JudgeClient({ ...endpoint, onRetry: io.printRetry }), cache);
  let result: CheckResult;
  try {
    result = await checkJudge(labelled, judge, recordingTranscript);
  } finally {
    await judge.client.close();
  }
  io.stdout.write(checkText(result));
  await cache.storeAgreements(judge.identity, calibrations(result, file));
  if (values.json) await writeJsonFile(values.json, result);
  const errors = result.overall.errors;
  if (errors > 0) {
    io.stderr.write(`${errors} item(s) could not be judged (see above): they are not counted in the agreement\n`);
    return 3;
  }
  return 0;
}

/**
 * The results as a reader sees them: one block per rubric, then the whole file. Every line holds
 * the judge's words or the labelled file's, so every line is escaped for the terminal.
 */
export function checkText(result: CheckResult): string {
  const lines = [`judge ${result.model}: ${result.items.length} labelled transcript(s)`];
  for (const { item, judgement } of result.items) {
    const mark = judgement.verdict === "error" ? "!" : judgement.verdict === item.human ? "✓" : "✗";
    const said =
      judgement.verdict === "error"
        ? `error: ${judgement.error}`
        : `judge ${judgement.verdict} ${judgement.agreement}${judgement.uncertain ? " (uncertain)" : ""}, human ${item.human}: ${judgement.reason}`;
    lines.push(`  ${mark} line ${item.line} ${JSON.stringify(item.rubric)}: ${said}`);
  }
  for (const r of [
    ...result.rubrics.map((r) => ({ ...r, name: JSON.stringify(r.rubric) })),
    { ...result.overall, name: "overall" },
  ]) {
    const c = r.confusion;
    const consistency = r.consistency === null ? "n/a" : String(round(r.consistency));
    const flips = r.flip_rate === null ? "n/a" : String(round(r.flip_rate));
    lines.push(
      `${r.name}: ${agreementLine(r)}; vote consistency ${consistency}, flip rate ${flips}${r.errors > 0 ? `; ${r.errors} not judged` : ""}`,
      `  confusion (human × judge): pass×pass ${c.human_pass_judge_pass}, pass×fail ${c.human_pass_judge_fail}, fail×pass ${c.human_fail_judge_pass}, fail×fail ${c.human_fail_judge_fail}`,
    );
    const oneVerdict = r.items > 0 ? oneVerdictOnly(r.human) : null;
    if (r.name !== "overall" && oneVerdict) lines.push(`  no gate accepts this measurement: ${oneVerdict}`);
    if (r.name !== "overall" && r.items < MIN_CALIBRATION_ITEMS) {
      lines.push(
        `  only ${r.items} labelled transcript(s): a gate (judge_min_agreement, judge_min_kappa) accepts a measurement over ${MIN_CALIBRATION_ITEMS} or more`,
      );
    }
  }
  return `${lines.map(terminalText).join("\n")}\n`;
}
