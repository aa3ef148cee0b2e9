// Judged expectations in the commands: the judge a run needs (exit 2 before any call when a judged
// scenario has no judge configured, or a rubric's measured agreement is below its scenario's
// judge_min_agreement), and `agent-iac judge check FILE`, which measures the configured judge
// against transcripts a person labelled.
import { judgeRubrics, type SmokeScenario } from "../definitions/index.ts";
import { CliError } from "../errors/index.ts";
import {
  agreementLine,
  type CheckResult,
  calibrations,
  checkJudge,
  DEFAULT_CACHE_DIR,
  Judge,
  JudgeClient,
  LabelledFileError,
  readLabelledFile,
  VoteCache,
} from "../judge/index.ts";
import { terminalText, writeJsonFile } from "../report/index.ts";
import { configMapReader, type JudgeSettings, requireJudge, resolveJudge } from "../settings/index.ts";
import { recordingTranscript } from "../smoke/index.ts";
import { parseCommand, STACK_FLAG } from "./args.ts";
import { printRetry } from "./lifecycle.ts";
import { stackConfigOrFile, stackFileConfig } from "./stack.ts";

/** The flags every command that runs scenarios takes for the judge. */
export const JUDGE_FLAGS = {
  "no-judge-cache": {
    type: "boolean",
    default: false,
    help: "ask the judge again for every vote (the cache is not read; new answers are still stored)",
  },
  "judge-cache": {
    type: "string",
    arg: "DIR",
    help: `where judge votes and the last \`judge check\` results are kept (default: ${DEFAULT_CACHE_DIR})`,
  },
} as const;

export const JUDGE_HELP = `judge: scenarios with expect.judge send each call's transcript to the judge endpoint the stack
names (agents:judgeBaseUrl, agents:judgeModel, the secret agents:judgeApiKey; else
AGENT_IAC_JUDGE_BASE_URL, AGENT_IAC_JUDGE_MODEL, AGENT_IAC_JUDGE_API_KEY) — nothing judges by default.`;

type JudgeFlags = { "no-judge-cache"?: boolean | undefined; "judge-cache"?: string | undefined };

/** The judge settings of a stack read offline (Pulumi.<stack>.yaml's plain values, then the environment). */
export async function offlineJudgeSettings(stack: string): Promise<JudgeSettings> {
  const config = await stackFileConfig(stack).catch(() => ({}));
  return resolveJudge(configMapReader(config));
}

/**
 * The judge of a run, or undefined when no scenario has judged expectations. Refuses (exit 2,
 * before any request) a judged run with no judge configured, and a scenario whose rubrics' last
 * measured agreement (`judge check`) is missing or below its judge_min_agreement.
 */
export async function runJudge(
  scenarios: readonly { agent: string; scenario: SmokeScenario }[],
  settings: JudgeSettings,
  flags: JudgeFlags,
  stack?: string,
): Promise<Judge | undefined> {
  const judged = scenarios.filter((s) => judgeRubrics(s.scenario.expect).length > 0);
  if (judged.length === 0) return undefined;
  const names = [...new Set(judged.map((s) => `${s.agent}/${s.scenario.name}`))];
  const shown = names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", ");
  const endpoint = requireJudge(settings, `scenario(s) ${shown} have judged expectations (expect.judge)`, stack);
  const cache = new VoteCache(flags["judge-cache"] ?? DEFAULT_CACHE_DIR, { read: !flags["no-judge-cache"] });
  const judge = new Judge(new JudgeClient({ ...endpoint, onRetry: printRetry }), cache);
  await requireAgreement(judged, judge);
  return judge;
}

async function requireAgreement(scenarios: readonly { agent: string; scenario: SmokeScenario }[], judge: Judge) {
  const measured = await judge.calibrations();
  const problems: string[] = [];
  for (const { agent, scenario } of scenarios) {
    const min = scenario.judge_min_agreement;
    if (min === undefined) continue;
    for (const { rubric } of judgeRubrics(scenario.expect)) {
      const last = measured[rubric];
      if (!last)
        problems.push(`${agent}/${scenario.name}: ${JSON.stringify(rubric)} was never measured with ${judge.model}`);
      else if (last.agreement < min)
        problems.push(
          `${agent}/${scenario.name}: ${JSON.stringify(rubric)} agreed with its human labels ${round(last.agreement)} of the time (${last.checked_at}), below judge_min_agreement ${min}`,
        );
    }
  }
  if (problems.length > 0) {
    await judge.client.close();
    throw new CliError(`the judge is not trusted for these rubrics:\n  ${problems.join("\n  ")}`, 2, {
      hint: "label transcripts of these rubrics and run `agent-iac judge check FILE` (see the README's judged expectations)",
    });
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

/** `judge test-model: 3 request(s), 6 vote(s) from the cache` — what judging a run cost. */
export function judgeUsageLine(judge: Judge | undefined): string {
  if (!judge || judge.stats.requests + judge.stats.cached === 0) return "";
  const cache = judge.cache?.read === false ? " (--no-judge-cache)" : "";
  return `judge ${judge.model}: ${judge.stats.requests} request(s), ${judge.stats.cached} vote(s) from the cache${cache}\n`;
}

const CHECK_SPEC = {
  name: "judge check",
  synopsis: "FILE [options]",
  about: `Runs the configured judge over transcripts a person labelled (FILE: YAML, items of rubric,
transcript lines or a recording, and the human's verdict) and reports, per rubric and overall, how
often the judge agrees with the labels, Cohen's kappa, the confusion matrix and how often the judge's
own votes agree. The results are stored in the judge cache directory: scenarios may require them
(judge_min_agreement), and smoke reports show each rubric's last measured agreement.`,
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

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== "check") {
    if (sub === "--help" || sub === "-h" || sub === undefined) {
      process.stdout.write("usage: agent-iac judge check FILE [options]   (agent-iac judge check --help)\n");
      return sub === undefined ? 2 : 0;
    }
    throw new CliError(`unknown judge command "${sub}": the one command is \`agent-iac judge check FILE\``, 2);
  }
  const parsed = parseCommand(CHECK_SPEC, rest);
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const file = positionals[0] as string;
  const labelled = await readLabelledFile(file).catch((error: unknown) => {
    if (error instanceof LabelledFileError) throw new CliError(error.message, 2);
    throw error;
  });
  const settings = resolveJudge(configMapReader(await stackConfigOrFile(values.stack).catch(() => ({}))));
  const endpoint = requireJudge(settings, `judge check ${file}`, values.stack);
  const cache = new VoteCache(values["judge-cache"] ?? DEFAULT_CACHE_DIR, { read: !values["no-judge-cache"] });
  const judge = new Judge(new JudgeClient({ ...endpoint, onRetry: printRetry }), cache);
  let result: CheckResult;
  try {
    result = await checkJudge(labelled, judge, recordingTranscript);
  } finally {
    await judge.client.close();
  }
  process.stdout.write(checkText(result));
  await cache.storeAgreements(result.model, calibrations(result, file));
  if (values.json) await writeJsonFile(values.json, result);
  const errors = result.overall.errors;
  if (errors > 0) {
    process.stderr.write(`${errors} item(s) could not be judged (see above): they are not counted in the agreement\n`);
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
    lines.push(
      `${r.name}: ${agreementLine(r)}; vote consistency ${consistency}${r.errors > 0 ? `; ${r.errors} not judged` : ""}`,
      `  confusion (human × judge): pass×pass ${c.human_pass_judge_pass}, pass×fail ${c.human_pass_judge_fail}, fail×pass ${c.human_fail_judge_pass}, fail×fail ${c.human_fail_judge_fail}`,
    );
  }
  return `${lines.map(terminalText).join("\n")}\n`;
}
