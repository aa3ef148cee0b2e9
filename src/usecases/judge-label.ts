// `judge label`: a seeded, stratified sample of the judged expectations in smoke reports, served on
// a blind page on loopback until Ctrl+C; each answer is on disk, in the labels file `judge check`
// reads, before the page hears it is saved.
import { InvalidInputError } from "../errors/index.ts";
import { disagreements, judgedItems, LabelStore, startLabelServer, stratifiedSample } from "../labels/index.ts";
import { readReport } from "../report/index.ts";

export type JudgeLabelRequest = {
  /** smoke --json reports (a replayed recording's report too). */
  reports: string[];
  /** The labels file, created on the first answer. */
  labels: string;
  labeller: string;
  /** How many items to draw; the default: every disagreement with --disagreements, else 40. */
  sample?: number | undefined;
  seed: string;
  /** Only the items where the judge and a labeller, or two labellers, disagree. */
  disagreements?: boolean | undefined;
};

export type JudgeLabelIO = {
  out: { write(text: string): unknown };
  /** Resolves at Ctrl+C (or SIGTERM). */
  untilInterrupted(): Promise<NodeJS.Signals>;
};

const DEFAULT_SAMPLE = 40;

async function readReports(files: readonly string[]) {
  return Promise.all(
    files.map((file) =>
      readReport(file).catch((error: Error) => {
        throw new InvalidInputError(
          `${error.message}: judge label reads smoke reports (--json); a recording (--record) holds no verdict: label the report of \`agent-iac smoke --replay FILE --json report.json\``,
          { value: file },
        );
      }),
    ),
  );
}

/** Serves the sample until interrupted; returns how many were drawn, how many answered this run, and the signal. */
export async function judgeLabel(
  request: JudgeLabelRequest,
  io: JudgeLabelIO,
): Promise<{ items: number; answered: number; signal: NodeJS.Signals | null }> {
  const judged = judgedItems(await readReports(request.reports));
  if (judged.length === 0) {
    throw new InvalidInputError(`${request.reports.join(", ")}: no judged expectation with a verdict to label`);
  }
  const store = new LabelStore(request.labels);
  const pool = request.disagreements ? disagreements(judged, await store.labels()) : judged;
  if (pool.length === 0) {
    io.out.write(
      `judge label: no item where the judge and a labeller, or two labellers, disagree in ${request.labels}\n`,
    );
    return { items: 0, answered: 0, signal: null };
  }
  const size = request.sample ?? (request.disagreements ? pool.length : DEFAULT_SAMPLE);
  const items = stratifiedSample(pool, size, request.seed);
  const verdicts = new Set(pool.map((item) => item.judge.verdict));
  if (verdicts.size === 1) {
    // Said without naming it: the labeller must not learn the verdicts before answering.
    io.out.write(
      "note: the judge gave every one of these items the same verdict, so the sample cannot hold both: label more reports for a kappa worth reading\n",
    );
  }
  const server = await startLabelServer({ items, store, labeller: request.labeller });
  io.out.write(
    `judge label: ${items.length} item(s) of ${pool.length} ${request.disagreements ? "disagreement(s)" : "judged expectation(s)"}, stratified by the judge's verdict and rubric (seed ${request.seed}), for ${request.labeller}\n` +
      `open ${server.url}\n` +
      `  (the address holds this run's one-time token: share it with no one; listening on 127.0.0.1 only)\n` +
      `answers are written to ${request.labels} as you give them; press Ctrl+C when done\n`,
  );
  const signal = await io.untilInterrupted();
  await server.close();
  io.out.write(`judge label: stopped (${signal}); ${server.answered()} answer(s) this run, in ${request.labels}\n`);
  return { items: items.length, answered: server.answered(), signal };
}
