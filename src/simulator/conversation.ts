// Runs simulated conversations (documented in README.md): queued → the profile's in-flight statuses
// → completed/failed, every event `eventDelayMs` after the one before, appended to the stored log
// (replayed to late subscribers) and pushed to live ones.
import { setTimeout as sleep } from "node:timers/promises";
import type { EventEnvelope } from "../contract/index.ts";
import type { Degradations } from "./degrade.ts";
import { chunks, failsAt, GOODBYE, greeting, isFarewell, simulation, toolNamed } from "./dialogue.ts";
import type { Profile } from "./profile.ts";
import type { Store, StoredConversation } from "./store.ts";

type Listener = (envelope: EventEnvelope) => void;
type Live = {
  listeners: Set<Listener>;
  injected: string[];
  endRequested: boolean;
  /** A WebSocket session is attached: a caller may speak over it. */
  session: boolean;
  wake: (() => void) | undefined;
};

/**
 * When the default turns are due and nobody follows the conversation yet, how long the simulated
 * caller waits for a stream or session to attach (a client opens it right after the create).
 */
const LISTENER_WAIT_MS = 1000;
/**
 * With a session attached, how long the simulated caller stays quiet after the greeting for the
 * session's caller to speak first; a session that says nothing by then gets the default turns.
 */
const SESSION_CALLER_WAIT_MS = 1500;

export const FINAL_STATUSES = new Set(["completed", "failed"]);

export class ConversationRunner {
  readonly #store: Store;
  readonly #eventDelayMs: number;
  readonly #userWaitTimeoutMs: number;
  /** The latency the simulator adds to every request: a client's session attaches that much later. */
  readonly #latencyMs: number;
  readonly #onEnded: (conversation: StoredConversation) => void;
  readonly #degradations: Degradations | undefined;
  readonly #profile: Profile;
  readonly #controller = new AbortController();
  readonly #live = new Map<string, Live>();
  /** Conversations started per failure series (agent version + `context.simulation`), for `failure_rate`. */
  readonly #series = new Map<string, number>();

  constructor(
    store: Store,
    options: {
      eventDelayMs: number;
      userWaitTimeoutMs: number;
      latencyMs?: number;
      profile: Profile;
      onEnded: (c: StoredConversation) => void;
      degradations?: Degradations;
    },
  ) {
    this.#degradations = options.degradations;
    this.#latencyMs = options.latencyMs ?? 0;
    this.#profile = options.profile;
    this.#store = store;
    this.#eventDelayMs = options.eventDelayMs;
    this.#userWaitTimeoutMs = options.userWaitTimeoutMs;
    this.#onEnded = options.onEnded;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  isEnded(conversation: StoredConversation): boolean {
    return conversation.events.at(-1)?.payload.type === "conversation.ended";
  }

  start(conversation: StoredConversation): void {
    this.#live.set(conversation.item.id, {
      listeners: new Set(),
      injected: [],
      endRequested: false,
      session: false,
      wake: undefined,
    });
    this.#run(conversation).catch((error: unknown) => {
      if (this.#controller.signal.aborted) return;
      process.stderr.write(`agent-iac simulator: conversation ${conversation.item.id}: ${String(error)}\n`);
    });
  }

  /** Live events of a running conversation; returns the unsubscribe function (no-op when it ended). */
  subscribe(id: string, listener: Listener): () => void {
    const live = this.#live.get(id);
    if (!live) return () => {};
    live.listeners.add(listener);
    live.wake?.();
    return () => live.listeners.delete(listener);
  }

  /** A WebSocket session attached to a running conversation: its caller may replace the default turns. */
  attachSession(id: string): void {
    const live = this.#live.get(id);
    if (!live) return;
    live.session = true;
    live.wake?.();
  }

  /** A user turn from a session; false when the conversation is not running. */
  userTurn(id: string, text: string): boolean {
    const live = this.#live.get(id);
    if (!live || live.endRequested) return false;
    live.injected.push(text);
    live.wake?.();
    return true;
  }

  /** Asks a running conversation to say goodbye and end. */
  end(id: string): boolean {
    const live = this.#live.get(id);
    if (!live) return false;
    live.endRequested = true;
    live.wake?.();
    return true;
  }

  /** Appends an event to a conversation's log and pushes it to its live subscribers. */
  emit(conversation: StoredConversation, payload: EventEnvelope["payload"]): EventEnvelope {
    const suffix = conversation.item.id.replace(/^conv_/, "");
    const position = conversation.events.length + 1;
    // `id` first: the variant's SSE framing splits the JSON right after it.
    const envelope: EventEnvelope = {
      id: `evt_${suffix}_${position}`,
      created_at: this.#now(conversation),
      payload,
      ...this.#profile.envelopeExtras(conversation.item.id, position),
    };
    conversation.events.push(envelope);
    this.#store.changed();
    for (const listener of this.#live.get(conversation.item.id)?.listeners ?? []) listener(envelope);
    return envelope;
  }

  /** "now" on the conversation's clock (seeded traffic may be dated in the past). */
  #now(conversation: StoredConversation): string {
    return this.#profile.now(Date.now() + (conversation.clock_offset_ms ?? 0));
  }

  stop(): void {
    this.#controller.abort();
    this.#live.clear();
  }

  async #run(conversation: StoredConversation): Promise<void> {
    const id = conversation.item.id;
    const live = this.#live.get(id) as Live;
    const sim = simulation(conversation.context);
    const pause = () => sleep(this.#eventDelayMs, undefined, { signal: this.#controller.signal });
    // The agent "thinks" before each response: the delay sits between the cue and its first event.
    const versionId = `${conversation.agent.id}@v${conversation.agent.version}`;
    // A version degraded by an admin (drift on demand): slower answers, tool calls dropped.
    const degraded = this.#degradations?.start(versionId);
    const think = () =>
      sleep(sim.responseDelayMs + (degraded?.slowMs ?? 0), undefined, { signal: this.#controller.signal });
    const rate = sim.failureRateByVersion[versionId] ?? sim.failureRate;
    const failed = sim.failed || (rate > 0 && failsAt(this.#nextInSeries(conversation), rate));
    const emit = async (payload: EventEnvelope["payload"]) => {
      await pause();
      this.emit(conversation, payload);
    };
    let generation = 0;
    let calls = 0;
    const say = async (text: string) => {
      const generation_id = `gen_${id.replace(/^conv_/, "")}_${++generation}`;
      for (const text_delta of chunks(text)) await emit({ type: "agent.message.delta", generation_id, text_delta });
      await emit({ type: "agent.message.completed", generation_id, text });
    };

    const profile = this.#profile;
    for (const status of profile.conversationSteps) {
      await pause();
      conversation.item.status = status;
      conversation.item.started_at ??= this.#now(conversation);
      this.#store.changed();
    }
    this.emit(conversation, { type: "conversation.started" });
    // An event type no client knows, which a transcript must skip.
    if (profile.extraEvents) await emit({ type: "agent.thinking", detail: { phase: "greeting" } });
    await think();
    await say(greeting(conversation.config));

    if (failed) {
      const why = sim.failed ? "context.simulation.outcome: failed" : "context.simulation.failure_rate";
      await emit({ type: "server.error", error: { message: `simulated failure (${why})` } });
      return this.#finish(conversation, "failed", `simulated failure (${why})`);
    }

    let saidGoodbye = false;
    const reply = async (text: string, final: boolean) => {
      await emit({ type: "user.message.received", text });
      await think();
      const tool = degraded?.dropToolCalls ? undefined : toolNamed(conversation.config, text);
      if (tool) {
        const call_id = `call_${id.replace(/^conv_/, "")}_${++calls}`;
        const args = profile.argumentsAsString ? JSON.stringify({ request: text }) : { request: text };
        await emit({ type: "agent.tool_call.created", call_id, name: tool, arguments: args });
        await emit({
          type: "agent.tool_call.returned",
          call_id,
          name: tool,
          arguments: args,
          result: { ok: true, tool },
        });
        await say(`I have used ${tool} for you.`);
        if (final) await say(GOODBYE);
      } else {
        await say(final ? GOODBYE : `I understand: ${text}`);
      }
      saidGoodbye ||= final;
    };

    if (!sim.scripted && (await this.#callerSpeaks(live, sim.callerWaitMs))) {
      // Driven over the session: only the caller's lines, until `end`, a farewell, or silence.
      // Lines sent before `end` are answered first.
      while (!saidGoodbye) {
        const text = live.injected.shift();
        if (text !== undefined) await reply(text, isFarewell(text));
        else if (live.endRequested || !(await this.#wakeWithin(live, this.#userWaitTimeoutMs))) break;
      }
      if (!saidGoodbye) await say(GOODBYE);
      return this.#finish(conversation, "completed", null);
    }

    const scripted = [...sim.userTurns];
    // Turns sent over a session go before the next scripted one; the last scripted turn is final
    // unless the conversation waits for the user.
    while (!live.endRequested && (scripted.length > 0 || live.injected.length > 0)) {
      const injected = live.injected.shift();
      if (injected !== undefined) {
        await reply(injected, false);
        continue;
      }
      const turn = scripted.shift() as string;
      await reply(turn, scripted.length === 0 && !sim.waitForUser);
    }
    if (sim.waitForUser) await this.#waitForUser(live, reply);
    if (!saidGoodbye) await say(GOODBYE);
    return this.#finish(conversation, "completed", null);
  }

  /**
   * Whether a caller speaks over a session before the default turns: waits for someone to follow
   * the conversation (LISTENER_WAIT_MS), then, with a session attached, for its first line
   * (`context.simulation.caller_wait_ms`, else SESSION_CALLER_WAIT_MS).
   */
  async #callerSpeaks(live: Live, callerWaitMs = SESSION_CALLER_WAIT_MS): Promise<boolean> {
    const spoke = () => live.injected.length > 0 || live.endRequested;
    // The simulator's own request latency delays the client's session handshake as much.
    const deadline = Date.now() + LISTENER_WAIT_MS + this.#latencyMs;
    while (live.listeners.size === 0 && !live.session && !spoke()) {
      if (!(await this.#wakeWithin(live, deadline - Date.now()))) break;
    }
    if (!live.session || spoke()) return spoke();
    const quiet = Date.now() + callerWaitMs;
    while (!spoke()) if (!(await this.#wakeWithin(live, quiet - Date.now()))) break;
    return spoke();
  }

  /** Waits for the conversation to be woken (a turn, `end`, a listener) for at most `ms`; false when it was not. */
  async #wakeWithin(live: Live, ms: number): Promise<boolean> {
    if (ms <= 0) return false;
    const woke = await new Promise<boolean>((resolve) => {
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.#controller.signal.removeEventListener("abort", onAbort);
        resolve(false);
      }, ms);
      this.#controller.signal.addEventListener("abort", onAbort, { once: true });
      live.wake = () => {
        clearTimeout(timer);
        this.#controller.signal.removeEventListener("abort", onAbort);
        resolve(true);
      };
    });
    live.wake = undefined;
    this.#controller.signal.throwIfAborted();
    return woke;
  }

  /** This conversation's position (from 1) in its failure series; counted only where failure_rate is set. */
  #nextInSeries(conversation: StoredConversation): number {
    const raw = (conversation.context as { simulation?: unknown }).simulation;
    const key = `${conversation.agent.id}@v${conversation.agent.version}\u0000${JSON.stringify(raw ?? null)}`;
    const n = (this.#series.get(key) ?? 0) + 1;
    this.#series.set(key, n);
    return n;
  }

  /** Acts on session turns until an `end` control message or the idle timeout. */
  async #waitForUser(live: Live, reply: (text: string, final: boolean) => Promise<void>) {
    while (!live.endRequested) {
      const text = live.injected.shift();
      if (text !== undefined) {
        await reply(text, false);
        continue;
      }
      const woke = await this.#wakeWithin(live, this.#userWaitTimeoutMs);
      if (!woke) return;
    }
  }

  async #finish(conversation: StoredConversation, status: string, failure: string | null): Promise<void> {
    await sleep(this.#eventDelayMs, undefined, { signal: this.#controller.signal });
    const item = conversation.item;
    const profile = this.#profile;
    item.status = status;
    item.completed_at = this.#now(conversation);
    item.failure_reason =
      failure !== null && profile.nullableObjects ? { code: "simulated", message: failure } : failure;
    if (profile.nullableObjects)
      item.sentiment = { label: status === "completed" ? "positive" : "negative", score: 0.5 };
    item.duration_sec = item.started_at ? (Date.parse(item.completed_at) - Date.parse(item.started_at)) / 1000 : 0;
    // Seeded traffic (context.simulation) states its duration and sentiment.
    const { durationSec, sentiment } = simulation(conversation.context);
    if (durationSec !== undefined) {
      item.duration_sec = durationSec;
      if (item.started_at) item.completed_at = profile.now(Date.parse(item.started_at) + durationSec * 1000);
    }
    if (sentiment !== undefined)
      item.sentiment = profile.nullableObjects ? { label: sentiment, score: 0.5 } : sentiment;
    this.emit(conversation, { type: "conversation.ended" });
    this.#live.delete(item.id);
    this.#onEnded(conversation);
  }
}
