// `agent-iac judge check FILE`: measures the configured judge against transcripts a person
// labelled. (The judge a run needs is set up by the smoke job: src/usecases/judge.ts.)
import { CliError } from "../errors/index.ts";
import { judgeCheck, judgeLabel, pullRequestBase } from "../usecases/index.ts";
import { parseCommand, STACK_FLAG, wholeNumber } from "./args.ts";
import { EXIT_CODES } from "./errors.ts";
import { JUDGE_FLAGS, JUDGE_HELP, judgeCache } from "./flags.ts";
import type { CommandIO } from "./lifecycle.ts";

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
    base: {
      type: "string",
      arg: "REF",
      help: "a pull request's base (a git ref): the judge settings are read from it as plan --base reads them",
    },
    "second-judge": {
      type: "string",
      arg: "MODEL",
      help: "also judge every item with this model (same endpoint and key as the judge) and report judge–judge kappa",
    },
    "within-humans": {
      type: "boolean",
      default: false,
      help: "gate: exit 1 unless the judge's kappa lower bound reaches the labellers' own (human–human) lower bound",
    },
    ...JUDGE_FLAGS,
  },
  positionals: { min: 1, max: 1, what: "the labelled file" },
  footer: `${JUDGE_HELP}

exit codes: 0 measured, 1 the --within-humans gate refused it, 2 usage or configuration error (the file, no judge configured), 3 an item
could not be judged (the judge's answer unreadable, a timeout, retries exhausted).`,
} as const;

const LABEL_SPEC = {
  name: "judge label",
  synopsis: "REPORT|RECORDINGS... [options]",
  about: `Serves a page on 127.0.0.1 for a person to label judged expectations: a seeded sample of the
reports' judged rubrics (a directory of recordings, smoke --record DIR, is first replayed through the
configured judge as smoke --replay DIR replays it, with the judge cache), stratified by the judge's verdict and by rubric (both verdicts whenever the
reports hold both; each conversation once), one at a time — the rubric, the transcript with who said
each line, the tool calls and procedure output — with the judge's verdict hidden until you answer
(p pass, f fail, s skip, b back). Each answer is written at once to the labels file \`judge check\`
reads, with the labeller and the time; a second run resumes where the first stopped.`,
  flags: {
    sample: {
      type: "string",
      arg: "N",
      value: wholeNumber(2),
      help: "items to draw (default 40; every disagreement with --disagreements)",
    },
    labeller: {
      type: "string",
      arg: "NAME",
      help: "who labels (default: $USER): two labellers' answers are both kept",
    },
    labels: { type: "string", default: "labels.yaml", arg: "FILE", help: "the labels file (default labels.yaml)" },
    seed: {
      type: "string",
      default: "1",
      arg: "TEXT",
      help: "the sample's seed (default 1): the same seed, the same sample",
    },
    disagreements: {
      type: "boolean",
      default: false,
      help: "only the items where the judge and a labeller, or two labellers, disagree",
    },
    stack: STACK_FLAG,
    ...JUDGE_FLAGS,
  },
  positionals: { min: 1, max: 100, what: "smoke reports (--json) or directories of recordings (--record)" },
  footer: `${JUDGE_HELP}

exit codes: 130 stopped with Ctrl+C (every answer given is on disk), 0 nothing to label, 2 usage, a file that
cannot be read, or recordings given and no judge configured.`,
} as const;

async function label(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(LABEL_SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values, positionals, typed } = parsed;
  const result = await judgeLabel(
    {
      reports: positionals,
      labels: values.labels,
      labeller: values.labeller || io.env.USER || "labeller",
      sample: typed.sample,
      seed: values.seed,
      disagreements: values.disagreements,
      stack: values.stack,
      project: io.project,
      judgeCache: judgeCache(values),
    },
    { out: io.stdout, onRetry: io.printRetry, untilInterrupted: () => io.untilInterrupted() },
  );
  return result.signal ? EXIT_CODES.AGENT_IAC_INTERRUPTED : 0;
}

const USAGE =
  "usage: agent-iac judge check FILE [options]\n       agent-iac judge label REPORT|RECORDINGS... [options]\n";

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "label") return label(rest, io);
  if (sub !== "check") {
    if (sub === "--help" || sub === "-h" || sub === undefined) {
      io.stdout.write(USAGE);
      return sub === undefined ? 2 : 0;
    }
    throw new CliError(
      `unknown judge command "${sub}": \`agent-iac judge check FILE\` or \`agent-iac judge label REPORT|RECORDINGS...\``,
    );
  }
  const parsed = parseCommand(CHECK_SPEC, rest, io.stdout);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const file = positionals[0] as string;
  const result = await judgeCheck(
    {
      project: io.project,
      file,
      stack: values.stack,
      base: pullRequestBase(values.base, io.env),
      json: values.json,
      cache: { dir: values["judge-cache"], read: !values["no-judge-cache"] },
      secondJudge: values["second-judge"],
      withinHumans: values["within-humans"],
    },
    { out: io.stdout, onRetry: io.printRetry },
  );
  const errors = result.overall.errors;
  if (errors > 0) {
    io.stderr.write(`${errors} item(s) could not be judged (see above): they are not counted in the agreement\n`);
    return EXIT_CODES.AGENT_IAC_MODEL_ANSWER;
  }
  return result.gate ? 1 : 0;
}
