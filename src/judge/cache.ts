// Votes on disk, keyed by everything that shapes an answer: the judge's endpoint and model, the
// prompt (its wording and answer schema), the rubric, the transcript and the vote's index. A re-run
// or a replay of the same transcript asks nothing; a changed rubric (or model, endpoint, prompt) is
// a new key and asks again. The directory also keeps the last `judge check` results
// (agreement.json). Default: .agent-iac/judge-cache/ (gitignored).
//
// Every entry and every agreement record carries an HMAC-SHA256 under a key only this machine (or
// CI) holds: AGENT_IAC_JUDGE_CACHE_KEY, else a random key created 0600 in the user's config
// directory ($XDG_CONFIG_HOME/agent-iac/judge-cache.key, ~/.config by default), outside any
// checkout. A hand-written, edited or foreign entry fails the check and is a cache miss (or "never
// measured"), never a verdict; a cache file tracked by git is refused.
import { execFile } from "node:child_process";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { ConfigError } from "../errors/index.ts";
import { PROMPT_FINGERPRINT } from "./prompt.ts";
import { capVote, type Vote } from "./verdict.ts";

/** The environment variable holding the cache's signing key (CI: a secret). */
const CACHE_KEY_ENV = "AGENT_IAC_JUDGE_CACHE_KEY";

/** The judge that answers: its endpoint and model (its votes and calibrations are evidence only for it). */
export type JudgeIdentity = { baseUrl: string; model: string };

export type VoteKey = { judge: JudgeIdentity; rubric: string; lines: readonly string[]; vote: number };

/** The key of one vote: a SHA-256 over the prompt, endpoint, model, rubric, transcript and vote index. */
function voteKey(key: VoteKey): string {
  const material = JSON.stringify([
    PROMPT_FINGERPRINT,
    key.judge.baseUrl,
    key.judge.model,
    key.rubric,
    key.lines,
    key.vote,
  ]);
  return createHash("sha256").update(material).digest("hex");
}

const voteSchema = z.object({
  verdict: z.enum(["pass", "fail"]),
  reason: z.string(),
  lines: z.array(z.int()),
  model: z.string().optional(),
});
const entrySchema = z.object({ vote: voteSchema, mac: z.string() });

/** Where the machine's signing key lives when AGENT_IAC_JUDGE_CACHE_KEY is not set. */
function cacheKeyFile(env: NodeJS.ProcessEnv): string {
  const config = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return path.join(config, "agent-iac", "judge-cache.key");
}

/** The signing key: the environment's, else the machine's (created 0600 on first use). */
async function signingKey(env: NodeJS.ProcessEnv): Promise<Buffer> {
  const fromEnv = env[CACHE_KEY_ENV];
  if (fromEnv) return Buffer.from(fromEnv, "utf8");
  const file = cacheKeyFile(env);
  const existing = await readFile(file, "utf8").catch(() => undefined);
  if (existing?.trim()) return Buffer.from(existing.trim(), "utf8");
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const fresh = randomBytes(32).toString("hex");
  try {
    await writeFile(file, `${fresh}\n`, { mode: 0o600, flag: "wx" });
    return Buffer.from(fresh, "utf8");
  } catch {
    // Another run created it first: use theirs.
    return Buffer.from((await readFile(file, "utf8")).trim(), "utf8");
  }
}

/** The fields of a vote and of a calibration in one fixed order (what is signed). */
// The answering model only where the endpoint named one (entries written before it was kept still verify).
const voteFields = (v: Vote) =>
  v.model === undefined ? [v.verdict, v.reason, v.lines] : [v.verdict, v.reason, v.lines, v.model];
const calibrationFields = (c: Calibration) => [
  c.agreement,
  c.kappa,
  c.items,
  c.consistency,
  c.checked_at,
  c.file,
  c.kappa_low,
  c.kappa_high,
  c.human_pass,
  c.human_fail,
  c.flip_rate,
];

function mac(key: Buffer, ...parts: unknown[]): string {
  return createHmac("sha256", key).update(JSON.stringify(parts)).digest("hex");
}

function sameMac(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Writes a file whole or not at all (a killed run leaves no half-written JSON). */
async function writeAtomic(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  await writeFile(temporary, text);
  await rename(temporary, file);
}

/** The paths under `dir` that git (run with the run's `env`) tracks (none when git or a repository is not there). */
function trackedFiles(dir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  return new Promise((resolve) => {
    execFile(
      "git",
      ["ls-files", "-z", "--full-name", "--", "."],
      { cwd: dir, env, timeout: 10_000, maxBuffer: 1 << 20 },
      (error, stdout) => resolve(error ? [] : stdout.split("\0").filter(Boolean)),
    );
  });
}

export class VoteCache {
  readonly dir: string;
  /** False with --no-judge-cache: nothing is read (answers are still written for the next run). */
  readonly read: boolean;
  readonly #env: NodeJS.ProcessEnv;
  #key: Promise<Buffer> | undefined;

  /** The directory as it was named (messages say it so). */
  readonly #named: string;

  /** `within`: the directory a relative `dir` is in (the run's project); `env`: the run's (the signing key). */
  constructor(dir: string, options: { read?: boolean; env: NodeJS.ProcessEnv; within: string }) {
    this.dir = path.resolve(options.within, dir);
    this.#named = dir;
    this.read = options.read ?? true;
    this.#env = options.env;
  }

  #signingKey(): Promise<Buffer> {
    this.#key ??= signingKey(this.#env);
    return this.#key;
  }

  /**
   * Refuses a cache directory git tracks a file of: a committed cache is anyone's writing, not
   * this judge's answers (a ConfigError naming the file and the way out).
   */
  async refuseTracked(): Promise<void> {
    const exists = await stat(this.dir).catch(() => undefined);
    if (!exists?.isDirectory()) return;
    const tracked = await trackedFiles(this.dir, this.#env);
    if (tracked.length === 0) return;
    throw new ConfigError(
      `the judge cache ${this.#named} holds file(s) tracked by git (${tracked[0]}${tracked.length > 1 ? ` and ${tracked.length - 1} more` : ""}): a committed cache or calibration is not evidence of this judge, so it is not used`,
      {
        hint: `remove it from git with \`git rm -r --cached ${this.#named}\` (it stays on disk and is gitignored), or point --judge-cache elsewhere`,
      },
    );
  }

  #file(hash: string): string {
    return path.join(this.dir, "votes", hash.slice(0, 2), `${hash}.json`);
  }

  /** The stored vote, when its signature is this machine's and it was made for this key; else undefined. */
  async get(key: VoteKey): Promise<Vote | undefined> {
    if (!this.read) return undefined;
    const hash = voteKey(key);
    const text = await readFile(this.#file(hash), "utf8").catch(() => undefined);
    if (text === undefined) return undefined;
    let parsed: ReturnType<typeof entrySchema.safeParse>;
    try {
      parsed = entrySchema.safeParse(JSON.parse(text));
    } catch {
      return undefined;
    }
    if (!parsed.success) return undefined;
    const { vote, mac: stored } = parsed.data;
    if (!sameMac(stored, mac(await this.#signingKey(), "vote", hash, voteFields(vote)))) return undefined;
    return capVote(vote);
  }

  async put(key: VoteKey, vote: Vote): Promise<void> {
    const hash = voteKey(key);
    const entry = { vote, mac: mac(await this.#signingKey(), "vote", hash, voteFields(vote)) };
    await writeAtomic(this.#file(hash), `${JSON.stringify(entry)}\n`);
  }

  get agreementFile(): string {
    return path.join(this.dir, "agreement.json");
  }

  async #records(): Promise<AgreementRecord[]> {
    const text = await readFile(this.agreementFile, "utf8").catch(() => undefined);
    if (text === undefined) return [];
    try {
      const parsed = agreementFileSchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data.records : [];
    } catch {
      return [];
    }
  }

  /**
   * The last `judge check` results of this judge (endpoint, model and prompt), by rubric: only
   * records signed on this machine for this judge count.
   */
  async agreements(judge: JudgeIdentity): Promise<Record<string, Calibration>> {
    const key = await this.#signingKey();
    const found: Record<string, Calibration> = {};
    for (const record of await this.#records()) {
      if (record.base_url !== judge.baseUrl || record.model !== judge.model) continue;
      const expected = mac(
        key,
        "calibration",
        PROMPT_FINGERPRINT,
        judge.baseUrl,
        judge.model,
        record.rubric,
        calibrationFields(record.calibration),
      );
      if (sameMac(record.mac, expected)) found[record.rubric] = record.calibration;
    }
    return found;
  }

  /** Stores a check's results per rubric, signed (other rubrics' and judges' results are kept). */
  async storeAgreements(judge: JudgeIdentity, byRubric: Record<string, Calibration>): Promise<void> {
    const key = await this.#signingKey();
    const kept = (await this.#records()).filter(
      (r) => !(r.base_url === judge.baseUrl && r.model === judge.model && r.rubric in byRubric),
    );
    const added = Object.entries(byRubric).map(([rubric, calibration]) => ({
      base_url: judge.baseUrl,
      model: judge.model,
      rubric,
      calibration,
      mac: mac(
        key,
        "calibration",
        PROMPT_FINGERPRINT,
        judge.baseUrl,
        judge.model,
        rubric,
        calibrationFields(calibration),
      ),
    }));
    await writeAtomic(this.agreementFile, `${JSON.stringify({ version: 2, records: [...kept, ...added] }, null, 2)}\n`);
  }
}

/** A rubric's last measured agreement with human labels (`agent-iac judge check`). */
const calibrationSchema = z.object({
  agreement: z.number(),
  kappa: z.number().nullable(),
  /**
   * Kappa's 95 % interval and the human verdicts' counts (a record written before they were
   * measured has none: its signature, made without them, no longer matches, so it reads as never
   * measured and `judge check` is run again).
   */
  kappa_low: z.number().nullable().default(null),
  kappa_high: z.number().nullable().default(null),
  human_pass: z.int().nullable().default(null),
  human_fail: z.int().nullable().default(null),
  /** How often two of the judge's votes on one item disagreed. */
  flip_rate: z.number().nullable().default(null),
  items: z.int(),
  consistency: z.number().nullable(),
  checked_at: z.string(),
  file: z.string().nullable(),
});
export type Calibration = z.output<typeof calibrationSchema>;
const agreementRecord = z.object({
  base_url: z.string(),
  model: z.string(),
  rubric: z.string(),
  calibration: calibrationSchema,
  mac: z.string(),
});
type AgreementRecord = z.output<typeof agreementRecord>;
const agreementFileSchema = z.object({ version: z.literal(2), records: z.array(agreementRecord) });
