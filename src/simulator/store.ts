// The simulator's state and its persistence. With a data file every change schedules one write
// (coalesced while a write is in flight), made atomically: a temp file in the same directory, then
// rename. The file is written record by record, so no single stored value can stop the others from
// being saved (a record that cannot be serialized is left out and reported), and no one string
// holds the whole state. A failed write is kept as `writeError` until a later write succeeds.
// Stream tokens are stored only as hashes. Item types are the contract's (z.infer), not restated.
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { access, open, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type {
  Conversation,
  CreateConversationalAgentRequest,
  CreateProceduralAgentRequest,
  EventEnvelope,
  Feedback,
  Procedure,
} from "../contract/index.ts";
import { LIMITS } from "./limits.ts";

type AgentRequest = CreateConversationalAgentRequest | CreateProceduralAgentRequest;
export type AgentVersion = Omit<AgentRequest, "postprocess_agents"> & {
  postprocess_agents?: string[];
  version: number;
  version_id: string;
  created_at: string;
};
export type StoredAgent = {
  kind: "conversational" | "procedural";
  id: string;
  seq: number;
  created_at: string;
  versions: AgentVersion[];
};

export type StoredConversation = {
  seq: number;
  item: Conversation;
  /** The agent's id (bare) and the version that handles the conversation. */
  agent: { id: string; version: number };
  config: CreateConversationalAgentRequest["config"];
  context: Record<string, unknown>;
  events: EventEnvelope[];
  /** `server.error` events stored for invalid session messages (bounded). */
  control_errors?: number;
  /** Seeded traffic (POST /_simulator/traffic) dated in the past: added to every timestamp it gets. */
  clock_offset_ms?: number;
};
export type StoredProcedure = { seq: number; item: Procedure };
export type StoredFeedback = { seq: number; service_id: string; item: Feedback };

type Delivery = {
  procedure_id: string;
  /** The conversation whose procedure it was (lets a run report only its own deliveries). */
  conversation_id?: string;
  url: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  attempted_at: string;
};
/** A POST received by the simulator's own sink, /_simulator/hooks/{name}. */
type HookRecord = { name: string; received_at: string; body: unknown };

export type State = {
  format: 1;
  service_id: string;
  seq: number;
  agents: StoredAgent[];
  conversations: StoredConversation[];
  procedures: StoredProcedure[];
  feedbacks: StoredFeedback[];
  deliveries: Delivery[];
  hooks: HookRecord[];
  /** sha256(token) → its conversation and expiry (epoch ms). */
  tokens: Record<string, { conversation_id: string; expires_at: number }>;
};
const LISTS = ["agents", "conversations", "procedures", "feedbacks", "deliveries", "hooks"] as const;

export const randomSuffix = (bytes = 9) => randomBytes(bytes).toString("base64url").replace(/[-_]/g, "x");
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

function emptyState(serviceId = `svc_${randomSuffix(6)}`): State {
  return {
    format: 1,
    service_id: serviceId,
    seq: 0,
    agents: [],
    conversations: [],
    procedures: [],
    feedbacks: [],
    deliveries: [],
    hooks: [],
    tokens: {},
  };
}

/** A `--data` file that cannot be used; the message never quotes the file's content. */
export class DataFileError extends Error {
  readonly code = "EDATAFILE";
}

export class Store {
  state: State;
  readonly file: string | undefined;
  #writing: Promise<void> | undefined;
  #dirty = false;
  /** Why the last write failed; undefined once a write succeeds. */
  writeError: string | undefined;
  lastWriteAt: string | undefined;
  readonly #unsaveable = new WeakSet<object>();
  agents = new Map<string, StoredAgent>();
  conversations = new Map<string, StoredConversation>();
  procedures = new Map<string, StoredProcedure>();

  private constructor(state: State, file: string | undefined) {
    this.state = state;
    this.file = file;
    this.#index();
  }

  static async open(file: string | undefined): Promise<Store> {
    if (!file) return new Store(emptyState(), undefined);
    const state = await readDataFile(file);
    return new Store(state ?? emptyState(), file);
  }

  nextSeq(): number {
    this.state.seq += 1;
    return this.state.seq;
  }

  /** Forgets every stored thing; the service id stays. */
  reset(): void {
    this.state = emptyState(this.state.service_id);
    this.#index();
    this.changed();
  }

  #index(): void {
    this.agents = new Map(this.state.agents.map((a) => [a.id, a]));
    this.conversations = new Map(this.state.conversations.map((c) => [c.item.id, c]));
    this.procedures = new Map(this.state.procedures.map((p) => [p.item.id, p]));
  }

  addAgent(agent: StoredAgent): void {
    this.state.agents.push(agent);
    this.agents.set(agent.id, agent);
    this.changed();
  }

  addConversation(conversation: StoredConversation): void {
    this.state.conversations.push(conversation);
    this.conversations.set(conversation.item.id, conversation);
    this.changed();
  }

  addProcedure(procedure: StoredProcedure): void {
    this.state.procedures.push(procedure);
    this.procedures.set(procedure.item.id, procedure);
    this.changed();
  }

  /** Appends to a bounded record list (deliveries, hooks): the oldest go first. */
  addRecord<K extends "deliveries" | "hooks">(list: K, record: State[K][number]): void {
    const records = this.state[list] as State[K][number][];
    records.push(record);
    if (records.length > LIMITS.keptRecords) records.splice(0, records.length - LIMITS.keptRecords);
    this.changed();
  }

  /** Schedules a write of the whole state (no-op without a data file). */
  changed(): void {
    if (!this.file) return;
    this.#dirty = true;
    this.#writing ??= this.#writeLoop();
  }

  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #writeLoop(): Promise<void> {
    const file = this.file as string;
    try {
      while (this.#dirty) {
        this.#dirty = false;
        const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomSuffix(4)}.tmp`);
        try {
          await this.#writeTo(temp);
          await rename(temp, file);
          this.writeError = undefined;
          this.lastWriteAt = new Date().toISOString();
        } catch (error) {
          await rm(temp, { force: true });
          this.writeError = (error as Error).message;
          process.stderr.write(`agent-iac simulator: could not write ${file}: ${this.writeError}\n`);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }

  /** The state as one JSON document, written in chunks of whole records. */
  async #writeTo(temp: string): Promise<void> {
    const handle = await open(temp, "w", 0o600);
    try {
      const state = this.state;
      let chunk = `{"format":1,"service_id":${JSON.stringify(state.service_id)},"seq":${state.seq},"tokens":${JSON.stringify(state.tokens)}`;
      for (const list of LISTS) {
        chunk += `,"${list}":[`;
        let first = true;
        for (const record of state[list] as object[]) {
          const text = this.#serialize(record);
          if (text === undefined) continue;
          chunk += first ? text : `,${text}`;
          first = false;
          if (chunk.length > 1 << 20) {
            await handle.write(chunk);
            chunk = "";
          }
        }
        chunk += "]";
      }
      await handle.write(`${chunk}}`);
    } finally {
      await handle.close();
    }
  }

  /** One record's JSON; undefined (reported once) for a record that cannot be serialized. */
  #serialize(record: object): string | undefined {
    if (this.#unsaveable.has(record)) return undefined;
    try {
      return JSON.stringify(record);
    } catch (error) {
      this.#unsaveable.add(record);
      const id = (record as { id?: string; item?: { id?: string } }).item?.id ?? (record as { id?: string }).id;
      process.stderr.write(
        `agent-iac simulator: ${id ?? "a record"} is left out of ${this.file}: ${(error as Error).message}\n`,
      );
      return undefined;
    }
  }
}

/** The directory of a `--data` file must exist and be writable (checked before anything is served). */
export async function checkDataDirectory(file: string): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  const dirStat = await stat(dir).catch(() => undefined);
  if (!dirStat?.isDirectory()) throw new DataFileError(`--data ${file}: the directory ${dir} does not exist`);
  await access(dir, constants.W_OK).catch(() => {
    throw new DataFileError(`--data ${file}: the directory ${dir} is not writable`);
  });
}

/**
 * A `--data` file's state: undefined when the file does not exist yet (its directory must exist and
 * be writable); a DataFileError when it is not the simulator's own format.
 */
async function readDataFile(file: string): Promise<State | undefined> {
  await checkDataDirectory(file);
  const fileStat = await stat(file).catch(() => undefined);
  if (!fileStat) return undefined;
  const notOurs = new DataFileError(
    `--data ${file}: not a simulator data file (give a new file name, or a file this simulator wrote)`,
  );
  if (!fileStat.isFile()) throw notOurs;
  await access(file, constants.R_OK | constants.W_OK).catch(() => {
    throw new DataFileError(`--data ${file}: not readable and writable`);
  });
  let state: Partial<State> | undefined;
  try {
    state = JSON.parse(await readFile(file, "utf8")) as Partial<State>;
  } catch {
    throw notOurs; // JSON.parse's message quotes the content: never shown
  }
  const lists = ["agents", "conversations", "procedures", "feedbacks", "deliveries"] as const;
  if (state?.format !== 1 || typeof state.service_id !== "string" || lists.some((l) => !Array.isArray(state[l])))
    throw notOurs;
  return { ...emptyState(state.service_id), ...state } as State;
}
