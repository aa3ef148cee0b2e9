// The simulator's state and its persistence. With a data file every change schedules one write
// (coalesced while a write is in flight), made atomically: a temp file in the same directory,
// then rename. `flush()` waits for the last write. Stream tokens are stored only as hashes.
import { createHash, randomBytes } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ConversationalAgentConfig, EventEnvelope, ProceduralAgentConfig } from "../contract/index.ts";

export type AgentVersion = {
  version: number;
  version_id: string;
  name: string;
  description: string;
  config: ConversationalAgentConfig | ProceduralAgentConfig;
  postprocess_agents?: string[];
  created_at: string;
};
export type StoredAgent = {
  kind: "conversational" | "procedural";
  id: string;
  seq: number;
  created_at: string;
  versions: AgentVersion[];
};

export type ConversationItem = {
  id: string;
  agent_id: string;
  livemode: boolean;
  created_at: string;
  direction: string;
  status: string;
  custom_fields: Record<string, unknown>;
  customer_id: unknown;
  channel_type: unknown;
  started_at: string | null;
  completed_at: string | null;
  failure_reason: unknown;
  duration_sec: number | null;
  sentiment: unknown;
};
export type StoredConversation = {
  seq: number;
  item: ConversationItem;
  /** The agent's id (bare) and the version that handles the conversation. */
  agent: { id: string; version: number };
  config: ConversationalAgentConfig;
  context: Record<string, unknown>;
  events: EventEnvelope[];
};

export type ProcedureItem = {
  id: string;
  livemode: boolean;
  name: string;
  conversation_id: string;
  agent_id: string;
  created_at: string;
  status: string;
  output: unknown;
  error: unknown;
};
export type StoredProcedure = { seq: number; item: ProcedureItem };

export type FeedbackItem = {
  id: string;
  conversation_id: string;
  created_at: string;
  rating: string;
  created_by_user_id: string;
  created_by_user_name: string;
  reasons: string[];
  comment: string;
};
export type StoredFeedback = { seq: number; service_id: string; item: FeedbackItem };

export type Delivery = {
  procedure_id: string;
  url: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  attempted_at: string;
};

export type State = {
  format: 1;
  service_id: string;
  seq: number;
  agents: StoredAgent[];
  conversations: StoredConversation[];
  procedures: StoredProcedure[];
  feedbacks: StoredFeedback[];
  deliveries: Delivery[];
  /** sha256(token) → its conversation and expiry (epoch ms). */
  tokens: Record<string, { conversation_id: string; expires_at: number }>;
};

export const randomSuffix = (bytes = 9) => randomBytes(bytes).toString("base64url").replace(/[-_]/g, "x");
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export function emptyState(serviceId = `svc_${randomSuffix(6)}`): State {
  return {
    format: 1,
    service_id: serviceId,
    seq: 0,
    agents: [],
    conversations: [],
    procedures: [],
    feedbacks: [],
    deliveries: [],
    tokens: {},
  };
}

export class Store {
  state: State;
  readonly #file: string | undefined;
  #writing: Promise<void> | undefined;
  #dirty = false;
  agents = new Map<string, StoredAgent>();
  conversations = new Map<string, StoredConversation>();
  procedures = new Map<string, StoredProcedure>();

  private constructor(state: State, file: string | undefined) {
    this.state = state;
    this.#file = file;
    this.#index();
  }

  static async open(file: string | undefined): Promise<Store> {
    if (!file) return new Store(emptyState(), undefined);
    let text: string | undefined;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (text === undefined) return new Store(emptyState(), file);
    const state = JSON.parse(text) as State;
    if (state?.format !== 1) throw new Error(`${file}: not a simulator data file (format ${String(state?.format)})`);
    return new Store(state, file);
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

  /** Schedules a write of the whole state (no-op without a data file). */
  changed(): void {
    if (!this.#file) return;
    this.#dirty = true;
    this.#writing ??= this.#writeLoop();
  }

  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
  }

  async #writeLoop(): Promise<void> {
    const file = this.#file as string;
    try {
      while (this.#dirty) {
        this.#dirty = false;
        const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomSuffix(4)}.tmp`);
        try {
          await writeFile(temp, JSON.stringify(this.state), { mode: 0o600 });
          await rename(temp, file);
        } catch (error) {
          await rm(temp, { force: true });
          process.stderr.write(`agent-iac simulator: could not write ${file}: ${(error as Error).message}\n`);
        }
      }
    } finally {
      this.#writing = undefined;
    }
  }
}
