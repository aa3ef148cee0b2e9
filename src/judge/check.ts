// `agent-iac judge check FILE`: the configured judge over transcripts a person labelled. The file
// (YAML) lists items — a rubric, a transcript (its display lines) or a recording, and the human's
// verdict — and every problem in it is reported at its file:line.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { isNode, LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { InvalidInputError } from "../errors/index.ts";
import { unreadableFile } from "../report/index.ts";
import { DEFAULT_MAX_VOTES } from "../stats/index.ts";
import { type AgreementStats, agreementStats, voteConsistency, voteFlipRate } from "./agreement.ts";
import type { Calibration } from "./cache.ts";
import type { Judge, Judgement } from "./votes.ts";

const DEFAULT_CHECK_VOTES = 3;
/**
 * The fewest labelled transcripts of a rubric whose measured agreement a scenario's
 * judge_min_agreement accepts (with fewer, one lucky item reaches agreement 1).
 */
export const MIN_CALIBRATION_ITEMS = 10;

/** Independent judge requests per item: odd (a majority), 1 … 15, or auto (adaptive, at most DEFAULT_MAX_VOTES). */
const votesSchema = z.union([
  z
    .int()
    .min(1)
    .max(15)
    .refine((n) => n % 2 === 1, "must be odd"),
  z.literal("auto"),
]);

const itemSchema = z
  .strictObject({
    rubric: z.string().trim().min(1, "must not be empty"),
    /** This item's votes (where the docs list it, beside `rubric`); else the file's `votes`. */
    votes: votesSchema.optional(),
    transcript: z.array(z.string()).min(1, "must have at least one line").optional(),
    recording: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "A recording (smoke --record), relative to this file." }),
    human: z.enum(["pass", "fail"]),
    note: z.string().optional(),
  })
  .superRefine((item, ctx) => {
    if ((item.transcript === undefined) === (item.recording === undefined)) {
      ctx.addIssue({ code: "custom", path: ["transcript"], message: "give either transcript (lines) or recording" });
    }
  });

const labelledFileSchema = z.strictObject({
  votes: votesSchema.default(DEFAULT_CHECK_VOTES),
  items: z.array(itemSchema).min(1, "must list at least one labelled transcript"),
});

type LabelledItem = z.output<typeof itemSchema> & { line: number };
export type LabelledFile = { file: string; votes: number | "auto"; items: LabelledItem[] };

/** A labelled file that cannot be used; `problems` are `file:line: field: message`. */
export class LabelledFileError extends InvalidInputError {
  override name = "LabelledFileError";
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    super(`${file}: ${problems.length} problem(s):\n${problems.join("\n")}`, { value: file });
    this.problems = problems;
  }
}

/** The largest labelled file read (bytes); its recordings are bounded where they are read. */
const MAX_LABELLED_FILE_BYTES = 10 * 1024 * 1024;

export async function readLabelledFile(file: string): Promise<LabelledFile> {
  const problem = await unreadableFile(file, MAX_LABELLED_FILE_BYTES);
  if (problem) throw new LabelledFileError(file, [`${file}: ${problem}`]);
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new LabelledFileError(file, [`${file}: cannot read it (${error.code ?? error.message})`]);
  });
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const lineOf = (offset: number | undefined) => (offset === undefined ? 1 : lineCounter.linePos(offset).line);
  if (doc.errors.length > 0) {
    throw new LabelledFileError(
      file,
      doc.errors.map((e) => `${file}:${lineOf(e.pos[0])}: ${e.message.split("\n")[0]}`),
    );
  }
  const at = (segments: readonly PropertyKey[]) => {
    for (let n = segments.length; n >= 0; n--) {
      const node = doc.getIn(segments.slice(0, n) as (string | number)[], true);
      if (isNode(node)) return lineOf(node.range?.[0]);
    }
    return 1;
  };
  let value: unknown;
  try {
    // The yaml library refuses a document whose aliases expand past its bound (a "billion laughs").
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new LabelledFileError(file, [
      `${file}: cannot be read as data (${(error as Error).message.slice(0, 200)}): expand its aliases (&name / *name)`,
    ]);
  }
  const parsed = labelledFileSchema.safeParse(value);
  if (!parsed.success) {
    throw new LabelledFileError(
      file,
      parsed.error.issues.map(
        (issue) => `${file}:${at(issue.path)}: ${issue.path.join(".") || "(file)"}: ${issue.message}`,
      ),
    );
  }
  const items = parsed.data.items.map((item, i) => ({
    ...item,
    ...(item.recording ? { recording: path.resolve(path.dirname(file), item.recording) } : {}),
    line: at(["items", i]),
  }));
  // A recording that is a directory, a FIFO (a read that never ends) or missing is named at its line.
  const problems: string[] = [];
  for (const [i, item] of items.entries()) {
    if (!item.recording) continue;
    const why = await unreadableFile(item.recording);
    if (why) problems.push(`${file}:${at(["items", i, "recording"])}: items.${i}.recording: ${item.recording}: ${why}`);
  }
  if (problems.length > 0) throw new LabelledFileError(file, problems);
  return { file, votes: parsed.data.votes, items };
}

type CheckedItem = { item: LabelledItem; judgement: Judgement };
/** `flip_rate`: how often two of the judge's votes on one item disagree (null with single votes). */
type Measured = AgreementStats & { consistency: number | null; flip_rate: number | null; errors: number };
type RubricCheck = Measured & { rubric: string };
export type CheckResult = {
  model: string;
  items: CheckedItem[];
  rubrics: RubricCheck[];
  overall: Measured;
};

/**
 * Judges every item (`readTranscript` turns a recording into display lines) and measures agreement
 * per rubric and overall. An item the judge could not judge (or did not settle) counts in `errors`, not in agreement.
 */
export async function checkJudge(
  labelled: LabelledFile,
  judge: Judge,
  readTranscript: (recording: string) => Promise<string[]>,
): Promise<CheckResult> {
  const items: CheckedItem[] = [];
  for (const item of labelled.items) {
    const lines = item.transcript ?? (await readTranscript(item.recording as string));
    const votes = item.votes ?? labelled.votes;
    const rubric =
      votes === "auto" ? { rubric: item.rubric, votes: DEFAULT_MAX_VOTES, auto: true } : { rubric: item.rubric, votes };
    items.push({ item, judgement: await judge.judge(rubric, lines) });
  }
  const measure = (list: CheckedItem[]): Measured => {
    const judged = list.filter((c) => c.judgement.verdict !== "error");
    // An unsettled judgement (votes: auto) is no verdict to agree with: not judged, its votes still counted.
    const pairs = judged.flatMap(({ item, judgement: { verdict } }) =>
      verdict === "pass" || verdict === "fail" ? [{ human: item.human, judge: verdict }] : [],
    );
    const votes = judged.map((c) => c.judgement.votes.map((v) => v.verdict));
    return {
      ...agreementStats(pairs),
      consistency: voteConsistency(votes),
      flip_rate: voteFlipRate(votes),
      errors: list.length - pairs.length,
    };
  };
  const rubrics = [...new Set(items.map((c) => c.item.rubric))].map((rubric) => ({
    rubric,
    ...measure(items.filter((c) => c.item.rubric === rubric)),
  }));
  return { model: judge.model, items, rubrics, overall: measure(items) };
}

/** What `judge check` stores per rubric, for scenarios' `judge_min_agreement` and the smoke report. */
export function calibrations(result: CheckResult, file: string, now = new Date()): Record<string, Calibration> {
  return Object.fromEntries(
    result.rubrics
      .filter((r) => r.items > 0)
      .map((r) => [
        r.rubric,
        {
          agreement: r.agreement,
          kappa: r.kappa,
          kappa_low: r.kappa_interval?.low ?? null,
          kappa_high: r.kappa_interval?.high ?? null,
          human_pass: r.human.pass,
          human_fail: r.human.fail,
          flip_rate: r.flip_rate,
          items: r.items,
          consistency: r.consistency,
          checked_at: now.toISOString(),
          file,
        },
      ]),
  );
}
