// Votes on disk, keyed by everything that shapes an answer: the judge model, the rubric, the
// transcript, the prompt version and the vote's index. A re-run or a replay of the same transcript
// asks nothing; a changed rubric (or model, or prompt) is a new key and asks again. The directory
// also keeps the last `judge check` results (agreement.json). Default: .agent-iac/judge-cache/
// (gitignored).
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { PROMPT_VERSION } from "./prompt.ts";
import type { Vote } from "./verdict.ts";

export const DEFAULT_CACHE_DIR = path.join(".agent-iac", "judge-cache");

export type VoteKey = { model: string; rubric: string; lines: readonly string[]; vote: number };

/** The key of one vote: a SHA-256 over the model, rubric, transcript, prompt version and vote index. */
function voteKey(key: VoteKey): string {
  const material = JSON.stringify([PROMPT_VERSION, key.model, key.rubric, key.lines, key.vote]);
  return createHash("sha256").update(material).digest("hex");
}

const voteSchema = z.object({
  verdict: z.enum(["pass", "fail"]),
  reason: z.string(),
  lines: z.array(z.int()),
});

/** Writes a file whole or not at all (a killed run leaves no half-written JSON). */
async function writeAtomic(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}

export class VoteCache {
  readonly dir: string;
  /** False with --no-judge-cache: nothing is read (answers are still written for the next run). */
  readonly read: boolean;

  constructor(dir: string = DEFAULT_CACHE_DIR, options: { read?: boolean } = {}) {
    this.dir = dir;
    this.read = options.read ?? true;
  }

  #file(hash: string): string {
    return path.join(this.dir, "votes", hash.slice(0, 2), `${hash}.json`);
  }

  async get(key: VoteKey): Promise<Vote | undefined> {
    if (!this.read) return undefined;
    const text = await readFile(this.#file(voteKey(key)), "utf8").catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      const parsed = voteSchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async put(key: VoteKey, vote: Vote): Promise<void> {
    await writeAtomic(this.#file(voteKey(key)), `${JSON.stringify(vote)}\n`);
  }

  get agreementFile(): string {
    return path.join(this.dir, "agreement.json");
  }

  /** The last `judge check` results, by model then rubric. */
  async agreements(): Promise<AgreementStore> {
    const text = await readFile(this.agreementFile, "utf8").catch(() => undefined);
    if (text === undefined) return {};
    try {
      const parsed = agreementStore.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : {};
    } catch {
      return {};
    }
  }

  /** Stores a check's results per rubric (other rubrics' and models' results are kept). */
  async storeAgreements(model: string, byRubric: Record<string, Calibration>): Promise<void> {
    const store = await this.agreements();
    store[model] = { ...(store[model] ?? {}), ...byRubric };
    await writeAtomic(this.agreementFile, `${JSON.stringify(store, null, 2)}\n`);
  }
}

/** A rubric's last measured agreement with human labels (`agent-iac judge check`). */
const calibrationSchema = z.looseObject({
  agreement: z.number(),
  kappa: z.number().nullable(),
  items: z.int(),
  consistency: z.number().nullable().default(null),
  checked_at: z.string(),
  file: z.string().nullable().default(null),
});
export type Calibration = z.output<typeof calibrationSchema>;
const agreementStore = z.record(z.string(), z.record(z.string(), calibrationSchema));
export type AgreementStore = z.output<typeof agreementStore>;
