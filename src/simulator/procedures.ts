// Procedures after a conversation: each procedural agent in the conversation's agent version's
// `postprocess_agents` whose `filter_statuses` include the final status (none given = every final
// status) gets a procedure `pending` → `completed` (or `failed`, see README.md) after
// `eventDelayMs`. Where `post_url` is a loopback address the procedure is POSTed there and the
// outcome recorded (GET /_simulator/deliveries); other addresses are recorded as not delivered.
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import type { ProceduralAgentConfig } from "../contract/index.ts";
import { procedureOutput, simulation } from "./dialogue.ts";
import { randomSuffix, type Store, type StoredConversation, type StoredProcedure } from "./store.ts";

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);
export const isLoopbackHost = (host: string) => LOOPBACK_HOSTS.has(host) || /^127(\.\d{1,3}){3}$/.test(host);

export class ProcedureRunner {
  readonly #store: Store;
  readonly #delayMs: number;
  readonly #signal: AbortSignal;

  constructor(store: Store, options: { eventDelayMs: number; signal: AbortSignal }) {
    this.#store = store;
    this.#delayMs = options.eventDelayMs;
    this.#signal = options.signal;
  }

  afterConversation(conversation: StoredConversation): void {
    const store = this.#store;
    const version = store.agents.get(conversation.agent.id)?.versions[conversation.agent.version - 1];
    for (const paId of version?.postprocess_agents ?? []) {
      const agent = store.agents.get(paId);
      const latest = agent?.versions.at(-1);
      if (!agent || !latest) continue;
      const config = latest.config as ProceduralAgentConfig;
      if (config.filter_statuses && !config.filter_statuses.includes(conversation.item.status)) continue;
      const procedure: StoredProcedure = {
        seq: store.nextSeq(),
        item: {
          id: `proc_${randomSuffix()}`,
          livemode: conversation.item.livemode,
          name: latest.name,
          conversation_id: conversation.item.id,
          agent_id: agent.id,
          created_at: new Date().toISOString(),
          status: "pending",
          output: null,
          error: null,
        },
      };
      store.addProcedure(procedure);
      this.run(procedure).catch(() => {});
    }
  }

  /** Completes a pending procedure (also used for those left pending by a restart). */
  async run(procedure: StoredProcedure): Promise<void> {
    await sleep(this.#delayMs, undefined, { signal: this.#signal });
    const store = this.#store;
    const conversation = store.conversations.get(procedure.item.conversation_id);
    const latest = store.agents.get(procedure.item.agent_id)?.versions.at(-1);
    const config = (latest?.config ?? {}) as ProceduralAgentConfig;
    const fail = conversation ? simulation(conversation.context).proceduresFail : false;
    if (fail) {
      procedure.item.status = "failed";
      procedure.item.error = { message: "simulated failure (context.simulation.procedure_outcome: failed)" };
    } else {
      const turns = conversation?.events.filter((e) => e.payload.type === "user.message.received").length ?? 0;
      const summary = `Conversation ${procedure.item.conversation_id} ${conversation?.item.status ?? "ended"} after ${turns} user turn${turns === 1 ? "" : "s"}.`;
      procedure.item.status = "completed";
      procedure.item.output = procedureOutput(config.output?.output_schema, summary);
    }
    store.changed();
    const url = config.output?.post_url;
    if (url) await this.#deliver(procedure, url);
  }

  async #deliver(procedure: StoredProcedure, url: string): Promise<void> {
    const record = (ok: boolean, status: number | null, error: string | null) => {
      this.#store.state.deliveries.push({
        procedure_id: procedure.item.id,
        url,
        ok,
        status,
        error,
        attempted_at: new Date().toISOString(),
      });
      this.#store.changed();
    };
    let host: string;
    try {
      host = new URL(url).hostname;
    } catch {
      return record(false, null, "not a URL");
    }
    if (!isLoopbackHost(host))
      return record(false, null, "not delivered: the simulator posts to loopback addresses only");
    try {
      const response = await request(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(procedure.item),
        headersTimeout: 5000,
        bodyTimeout: 5000,
        signal: this.#signal,
      });
      await response.body.dump();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      record(ok, response.statusCode, ok ? null : `answered ${response.statusCode}`);
    } catch (error) {
      if (this.#signal.aborted) return;
      record(false, null, (error as Error).message);
    }
  }
}
