// `agent-iac judge check FILE`: measures the configured judge against transcripts a person
// labelled. (The judge a run needs is set up by the smoke job: src/usecases/judge.ts.)
import { CliError } from "../errors/index.ts";
import { judgeCheck } from "../usecases/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { EXIT_CODES } from "./errors.ts";
import { JUDGE_FLAGS, JUDGE_HELP } from "./flags.ts";
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
  const result = await judgeCheck(
    {
      project: io.project,
      file,
      stack: values.stack,
      json: values.json,
      cache: { dir: values["judge-cache"], read: !values["no-judge-cache"] },
    },
    { out: io.stdout, onRetry: io.printRetry },
  );
  const errors = result.overall.errors;
  if (errors > 0) {
    io.stderr.write(`${errors} item(s) could not be judged (see above): they are not counted in the agreement\n`);
    return EXIT_CODES.AGENT_IAC_MODEL_ANSWER;
  }
  return 0;
}
