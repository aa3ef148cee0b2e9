// Procedures after a conversation: each procedural agent in the conversation's agent version's
// `postprocess_agents` whose `filter_statuses` include the final status (none given = every final
// status) gets a procedure `pending` → the profile's in-flight statuses → `completed` (or `failed`,
// see README.md). Where `post_url` is set the finished procedure is delivered once: to this
// simulator's own sink when the URL is a loopback name with a /_simulator/hooks/ path (whatever its
// port), else POSTed when it is a loopback address; other addresses are recorded as not delivered.
// Deliveries are bounded per second; every outcome is recorded (GET /_simulator/deliveries).
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { isLoopbackHost, type ProceduralAgentConfig } from "../contract/index.ts";
import { procedureOutput, simulation } from "./dialogue.ts";
import { LIMITS } from "./limits.ts";
import type { Profile } from "./profile.ts";
import { randomSuffix, type Store, type StoredConversation, type StoredProcedure } from "./store.ts";

const HOOKS_PATH = "/_simulator/hooks/";

export class ProcedureRunner {
  readonly #store: Store;
  readonly #delayMs: number;
  readonly #signal: AbortSignal;
  readonly #profile: Profile;
  readonly #log: (line: string) => void;
  /** Start times of the deliveries of the last second. */
  #recent: number[] = [];

  constructor(
    store: Store,
    options: { eventDelayMs: number; profile: Profile; signal: AbortSignal; log: (line: string) => void },
  ) {
    this.#store = store;
    this.#delayMs = options.eventDelayMs;
    this.#signal = options.signal;
    this.#profile = options.profile;
    this.#log = options.log;
  }

  afterConversation(conversation: StoredConversation): void {
    const store = this.#store;
    const version = store.agents.get(conversation.agent.id)?.versions[conversation.agent.version - 1];
    for (const paId of new Set(version?.postprocess_agents ?? [])) {
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
          created_at: this.#profile.now(Date.now() + (conversation.clock_offset_ms ?? 0)),
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
    // Each status, `pending` included, is visible for at least the profile's step time.
    const hold = () =>
      sleep(Math.max(this.#delayMs, this.#profile.procedureStepMs), undefined, { signal: this.#signal });
    await hold();
    const store = this.#store;
    for (const status of this.#profile.procedureSteps) {
      procedure.item.status = status;
      store.changed();
      await hold();
    }
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

  /** False when the deliveries of the last second already reached the bound. */
  #admit(): boolean {
    const now = Date.now();
    this.#recent = this.#recent.filter((t) => now - t < 1000);
    if (this.#recent.length >= LIMITS.deliveriesPerSecond) return false;
    this.#recent.push(now);
    return true;
  }

  async #deliver(procedure: StoredProcedure, url: string): Promise<void> {
    const record = (ok: boolean, status: number | null, error: string | null) => {
      this.#store.addRecord("deliveries", {
        procedure_id: procedure.item.id,
        conversation_id: procedure.item.conversation_id,
        url,
        ok,
        status,
        error,
        attempted_at: this.#profile.now(),
      });
      if (!ok) this.#log(`delivery of ${procedure.item.id} to ${url} failed: ${error}`);
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return record(false, null, "not a URL");
    }
    if (!isLoopbackHost(target.hostname)) {
      return record(false, null, "not delivered: the simulator posts to loopback addresses only");
    }
    if (!this.#admit()) {
      return record(false, null, `not delivered: more than ${LIMITS.deliveriesPerSecond} deliveries in one second`);
    }
    if (target.pathname.startsWith(HOOKS_PATH)) {
      // This simulator's own sink, whatever port the URL names (see README.md).
      const name = decodeURIComponent(target.pathname.slice(HOOKS_PATH.length));
      this.#store.addRecord("hooks", { name, received_at: this.#profile.now(), body: procedure.item });
      return record(true, 200, null);
    }
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
