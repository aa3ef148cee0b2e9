// The labels file `judge check` reads, written one answer at a time: each answer is read into the
// file as it stands on disk (another labeller's answers kept), then written whole to a temporary file
// and renamed over it, so a stop at any moment leaves the old file or the new one, never half of one.
import { randomBytes } from "node:crypto";
import { access, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { Document, isSeq, parseDocument, YAMLSeq } from "yaml";
import { IoError } from "../errors/index.ts";
import { itemKey, readLabelledFile, rubricHash } from "../judge/index.ts";
import type { LabelItem, Verdict } from "./sample.ts";

export type Answer = Verdict | "skip";

/** One label as the file keeps it. */
export type Label = {
  rubric: string;
  transcript: string[];
  human: Answer;
  note?: string | undefined;
  labeller?: string | undefined;
  labelled_at?: string | undefined;
  judge?: { verdict: Verdict; model: string } | undefined;
};

const exists = (file: string) =>
  access(file).then(
    () => true,
    () => false,
  );

/** The key a label is one item by (its rubric and transcript), as `judge check` counts it. */
export const labelKey = (label: { rubric: string; transcript: readonly string[] }) =>
  itemKey(label.rubric, label.transcript);

/** A lock older than this was left by a process that died mid-write: it is taken over. */
const STALE_LOCK_MS = 30_000;
const LOCK_WAIT_MS = 10_000;

/**
 * Runs `work` holding `FILE.lock` (a directory: mkdir is atomic), so two labellers' runs on one
 * file never read it at the same moment and write over each other's answer.
 */
async function withLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new IoError(`cannot lock ${file}: ${error}`);
      const since = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (since > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new IoError(`${lock}: another judge label run holds it; try again`);
      else await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

export class LabelStore {
  /** The file as named (messages say it so). */
  readonly file: string;
  /** The file, resolved against the directory of the run that named it. */
  readonly #path: string;
  readonly #within: string;
  #queue: Promise<unknown> = Promise.resolve();

  /** `file` relative to `within` (the run's project directory) unless absolute. */
  constructor(file: string, within: string) {
    this.file = file;
    this.#within = within;
    this.#path = path.resolve(within, file);
  }

  /** Every label in the file (none when it does not exist yet); a file `judge check` refuses is refused here too. */
  async labels(): Promise<Label[]> {
    if (!(await exists(this.#path))) return [];
    const labelled = await readLabelledFile(this.file, this.#within);
    return labelled.items.flatMap((item) => (item.transcript ? [item as Label] : []));
  }

  /**
   * Writes one labeller's answer to an item (replacing that labeller's earlier answer to it, keeping
   * everyone else's), atomically. Answers are written one after the other, in the order given.
   */
  answer(item: LabelItem, answer: Answer, labeller: string, note: string, now: Date): Promise<void> {
    const write = this.#queue.then(() => withLock(this.#path, () => this.#write(item, answer, labeller, note, now)));
    this.#queue = write.catch(() => undefined);
    return write;
  }

  /** Resolves once every answer given so far is on disk (or failed): a stopping run waits for it. */
  async settled(): Promise<void> {
    await this.#queue;
  }

  async #write(item: LabelItem, answer: Answer, labeller: string, note: string, now: Date): Promise<void> {
    const doc = (await exists(this.#path))
      ? parseDocument(await readFile(this.#path, "utf8"))
      : new Document({ items: [] });
    if (doc.errors.length > 0) throw new IoError(`${this.file}: ${doc.errors[0]?.message.split("\n")[0]}`);
    let items = doc.get("items", true);
    if (!isSeq(items)) {
      items = new YAMLSeq();
      doc.set("items", items);
    }
    const seq = items as YAMLSeq;
    const key = labelKey(item);
    const current = (doc.toJS().items ?? []) as Label[];
    const at = current.findIndex((l) => l.labeller === labeller && Array.isArray(l.transcript) && labelKey(l) === key);
    const label = {
      rubric: item.rubric,
      transcript: item.transcript,
      human: answer,
      ...(note ? { note } : {}),
      labeller,
      labelled_at: now.toISOString(),
      conversation: item.conversation,
      rubric_sha256: rubricHash(item.rubric),
      // The judge's verdict, apart from the person's: `--disagreements` and the staleness check read it.
      judge: item.judge,
    };
    const node = doc.createNode(label);
    if (at >= 0) seq.set(at, node);
    else seq.add(node);
    const temp = `${this.#path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await writeFile(temp, doc.toString({ lineWidth: 0 }), { mode: 0o644 });
      await rename(temp, this.#path);
    } catch (error) {
      await rm(temp, { force: true });
      throw new IoError(`cannot write ${this.file}: ${(error as NodeJS.ErrnoException).code ?? error}`, {
        cause: error,
      });
    }
  }
}

/**
 * The items a second look is for: where a labeller's pass or fail is not the judge's verdict, or two
 * labellers' are not the same.
 */
export function disagreements(items: readonly LabelItem[], labels: readonly Label[]): LabelItem[] {
  return items.filter((item) => {
    const key = labelKey(item);
    const said = new Set(
      labels.filter((l) => l.human !== "skip" && labelKey(l) === key).map((l) => l.human as Verdict),
    );
    return said.size > 1 || (said.size === 1 && !said.has(item.judge.verdict));
  });
}
