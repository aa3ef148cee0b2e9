// The explicit context every plugin works on: {store, runners, faults, options} plus the request
// counts and open streams. Plugins hold the `Sim` box and read `sim.ctx` per request, so
// `/_simulator/reset` swaps in a fresh context instead of reassigning anything.
import { randomBytes } from "node:crypto";
import type { FastifyPluginAsync } from "fastify";
import { ConversationRunner } from "./conversation.ts";
import { Degradations } from "./degrade.ts";
import { Faults } from "./faults.ts";
import { ProcedureRunner } from "./procedures.ts";
import type { Profile } from "./profile.ts";
import type { Store } from "./store.ts";

/** The options with every default applied. */
export type Settings = {
  host: string;
  apiKey: string;
  latencyMs: number;
  eventDelayMs: number;
  pageSize: number;
  tokenTtlMs: number;
  userWaitTimeoutMs: number;
  requestTimeoutMs: number;
  quiet: boolean;
  profile: Profile;
};

export type SimContext = {
  store: Store;
  runners: { conversations: ConversationRunner; procedures: ProcedureRunner };
  faults: Faults;
  /** Pinned versions degraded from a moment on (POST /_simulator/degrade): drift on demand. */
  degradations: Degradations;
  options: Settings;
  requests: { count: number; by_route: Record<string, number> };
  streams: Set<{ destroy(): void }>;
  /** Signs list cursors: a cursor this context did not issue is refused. */
  cursorKey: Buffer;
};

export type Sim = {
  ctx: SimContext;
  /** "http://127.0.0.1:PORT", set once listening. */
  baseUrl: string;
  /** Aborted by close(): ends latency waits. */
  lifetime: AbortController;
  /** Who serves (GET /_simulator/info): lets a client tell one checkout's simulator from another's. */
  identity?: SimulatorIdentity;
};

type SimulatorIdentity = {
  pid: number;
  /** The data file, absolute; null for an in-memory simulator. */
  data_file: string | null;
  /** The directory it was started for (the command's project); absent when not said. */
  cwd?: string;
  started_at: string;
};

export function createContext(store: Store, options: Settings): SimContext {
  let procedures: ProcedureRunner | undefined;
  const degradations = new Degradations();
  const conversations = new ConversationRunner(store, {
    degradations,
    eventDelayMs: options.eventDelayMs,
    userWaitTimeoutMs: options.userWaitTimeoutMs,
    latencyMs: options.latencyMs,
    profile: options.profile,
    onEnded: (conversation) => procedures?.afterConversation(conversation),
  });
  procedures = new ProcedureRunner(store, {
    eventDelayMs: options.eventDelayMs,
    profile: options.profile,
    signal: conversations.signal,
    log: options.quiet ? () => {} : (line) => process.stderr.write(`agent-iac simulator: ${line}\n`),
  });
  return {
    store,
    runners: { conversations, procedures },
    faults: new Faults(),
    degradations,
    options,
    requests: { count: 0, by_route: {} },
    streams: new Set(),
    cursorKey: randomBytes(32),
  };
}

/** Stops a context's running conversations and open streams. */
export function stopContext(ctx: SimContext): void {
  ctx.runners.conversations.stop();
  for (const stream of [...ctx.streams]) stream.destroy();
}

export type SimPlugin = FastifyPluginAsync<{ sim: Sim }>;

/** Marks a plugin as not encapsulated (what fastify-plugin does): its hooks and handlers apply app-wide. */
export function global<T extends FastifyPluginAsync<{ sim: Sim }>>(plugin: T): T {
  Object.assign(plugin, { [Symbol.for("skip-override")]: true });
  return plugin;
}

/** The paging settings every list route passes to `page`: size, cursor key and the profile's ending. */
export const pagingOf = (ctx: SimContext) => ({
  pageSize: ctx.options.pageSize,
  key: ctx.cursorKey,
  trailingEmptyPage: ctx.options.profile.trailingEmptyPage,
});
