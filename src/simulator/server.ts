// The local simulator: every operation of the service interface on one Fastify server (app.ts and
// the plugins it registers), plus the simulator-only routes under /_simulator/. `startSimulator`
// resolves the options, takes the data file's lock, opens the store, recovers from a restart,
// listens, and returns the handle that closes it all. The choices the interface leaves open are
// documented in README.md beside this file.
import path from "node:path";
import { isLoopbackHost } from "../contract/index.ts";
import { buildApp } from "./app.ts";
import { createContext, type Settings, type Sim, type SimContext, stopContext } from "./context.ts";
import { FINAL_STATUSES } from "./conversation.ts";
import { LIMITS } from "./limits.ts";
import { acquireLock, type LockHandle } from "./lock.ts";
import { PROFILES, type ProfileName } from "./profile.ts";
import { checkDataDirectory, Store } from "./store.ts";

/** The documented local-only key, used when no key is given; refused on a non-loopback host. */
export const DEV_API_KEY = "sk-agent-iac-local-dev-key";

export type SimulatorOptions = {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default DEV_API_KEY (loopback hosts only). */
  apiKey?: string;
  /** The directory it serves (the command's project), said by `service status`; none when unset. */
  cwd?: string;
  /** Persist the state to this JSON file (atomic writes, locked against a second simulator). */
  dataFile?: string;
  /** Added before handling every service request. Default 0. */
  latencyMs?: number;
  /** Delay between two events of a conversation, and before a procedure completes. Default 10. */
  eventDelayMs?: number;
  /** Items per list page. Default 20 (the variant profile: 2). */
  pageSize?: number;
  /** Lifetime of a conversation's stream token. Default 15 minutes. */
  tokenTtlMs?: number;
  /** How long a `wait_for_user` conversation waits for the next session message. Default 60 s. */
  userWaitTimeoutMs?: number;
  /** Time to receive a whole request, headers and body. Default 30 s. */
  requestTimeoutMs?: number;
  /** The open choices of the interface: "default" or "variant" (see README.md). */
  profile?: ProfileName;
  /** No request log on stderr. */
  quiet?: boolean;
};

export type Simulator = {
  /** "http://127.0.0.1:PORT", no trailing slash. */
  url: string;
  apiKey: string;
  serviceId: string;
  profile: ProfileName;
  /** Why the last write of the data file failed; undefined when it succeeded (or no data file). */
  persistenceError(): string | undefined;
  close(): Promise<void>;
};

export function resolveSettings(options: SimulatorOptions): Settings {
  const host = options.host ?? "127.0.0.1";
  const apiKey = options.apiKey || DEV_API_KEY;
  if (apiKey === DEV_API_KEY && !isLoopbackHost(host)) {
    throw new Error(
      `refusing to listen on ${host} with the documented dev key: give an API key (--api-key or AGENT_IAC_API_KEY) or use a loopback host`,
    );
  }
  const profile = PROFILES[options.profile ?? "default"];
  if (!profile) throw new Error(`unknown profile "${options.profile}" (known: ${Object.keys(PROFILES).join(", ")})`);
  return {
    host,
    apiKey,
    latencyMs: options.latencyMs ?? 0,
    eventDelayMs: options.eventDelayMs ?? 10,
    pageSize: options.pageSize ?? profile.pageSize,
    tokenTtlMs: options.tokenTtlMs ?? 15 * 60_000,
    userWaitTimeoutMs: options.userWaitTimeoutMs ?? 60_000,
    requestTimeoutMs: options.requestTimeoutMs ?? LIMITS.requestTimeoutMs,
    quiet: options.quiet ?? false,
    profile,
  };
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const settings = resolveSettings(options);
  let lock: LockHandle | undefined;
  if (options.dataFile) {
    await checkDataDirectory(options.dataFile);
    lock = await acquireLock(options.dataFile);
  }
  try {
    const store = await Store.open(options.dataFile);
    const sim: Sim = {
      ctx: createContext(store, settings),
      baseUrl: "",
      lifetime: new AbortController(),
      identity: {
        pid: process.pid,
        data_file: options.dataFile ? path.resolve(options.dataFile) : null,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        started_at: new Date().toISOString(),
      },
    };
    recoverAfterRestart(sim.ctx);
    const app = await buildApp(sim);
    await app.listen({ host: settings.host, port: options.port ?? 8787 }).catch(async (error: unknown) => {
      stopContext(sim.ctx);
      await app.close();
      throw error;
    });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : (options.port ?? 8787);
    const host = settings.host;
    const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
    sim.baseUrl = `http://${shownHost}:${port}`;
    await lock?.setUrl(sim.baseUrl);

    let closing: Promise<void> | undefined;
    return {
      url: sim.baseUrl,
      apiKey: settings.apiKey,
      serviceId: store.state.service_id,
      profile: settings.profile.name,
      persistenceError: () => sim.ctx.store.writeError,
      close: () => {
        closing ??= (async () => {
          sim.lifetime.abort();
          stopContext(sim.ctx);
          for (const client of app.websocketServer?.clients ?? []) client.terminate();
          await app.close();
          await sim.ctx.store.flush();
          await lock?.release();
        })();
        return closing;
      },
    };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/** A restart cannot resume a running conversation: it ends as failed; unfinished procedures complete. */
function recoverAfterRestart(ctx: SimContext): void {
  const { store, runners } = ctx;
  for (const conversation of store.state.conversations) {
    if (runners.conversations.isEnded(conversation)) continue;
    const item = conversation.item;
    if (!FINAL_STATUSES.has(item.status)) {
      item.status = "failed";
      item.failure_reason = "interrupted: the simulator stopped while the conversation ran";
      item.completed_at = ctx.options.profile.now();
    }
    runners.conversations.emit(conversation, { type: "conversation.ended" });
  }
  for (const procedure of store.state.procedures) {
    const status = procedure.item.status;
    if (status === "pending" || ctx.options.profile.procedureSteps.includes(status)) {
      runners.procedures.run(procedure).catch(() => {});
    }
  }
}
