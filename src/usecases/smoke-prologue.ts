// The one prologue of the commands that run on a stack (smoke, start, plan): open the stack, say its
// warnings, refuse invalid agent files before anything runs; for smoke calls, then plan the calls
// against the versions it holds (saying which of its outputs are stale).
import { type OldVersions, readOldVersions } from "../compare/index.ts";
import { formatDiagnostic, simulationWarnings } from "../definitions/index.ts";
import { ConfigError, InvalidInputError } from "../errors/index.ts";
import type { ProjectContext, StackFileVersions } from "../settings/index.ts";
import { parseShard, planSmoke, type Selection, type Shard, type SmokePlan } from "../smoke/index.ts";
import { type HeldAgents, openSession, type StackSession, staleOutputsNote } from "./session.ts";

/** The part of the suite a sharded run plays, from `I/N` with 1 ≤ I ≤ N (bad input otherwise). */
export function suiteShard(text: string | undefined): Shard | undefined {
  if (text === undefined) return undefined;
  const shard = parseShard(text);
  if (shard) return shard;
  throw new InvalidInputError((name) => `${name("shard")} must be I/N with 1 ≤ I ≤ N (e.g. 2/3), not "${text}"`, {
    field: "shard",
    value: text,
  });
}

/** Where the prologue's warnings go (a command's stderr). */
export type Warn = (text: string) => void;

/** Opens the stack and refuses invalid agent files (`consequence`: e.g. "; nothing was deployed"). */
export async function openValidStack(
  stack: string,
  options: {
    project: ProjectContext;
    create?: boolean;
    readState?: boolean;
    what?: string;
    base?: StackFileVersions;
    consequence?: string;
  },
  warn: Warn,
): Promise<StackSession> {
  const { consequence, ...open } = options;
  const session = await openSession(stack, open);
  if (session.secretsWarning) warn(session.secretsWarning);
  await session.validFiles(consequence);
  return session;
}

/** The calls of the selection against the versions `held` pins (after a deploy, the ones it made). */
export async function planHeld(
  session: StackSession,
  held: HeldAgents,
  scope: { selection: Selection; shard?: Shard | undefined },
  warn: Warn,
): Promise<SmokePlan> {
  if (held.stale.length > 0) warn(staleOutputsNote(session.name, held.stale));
  const definitions = await session.scenarioAgents(held);
  return planSmoke(definitions, held.agents, scope.selection, scope.shard);
}

export type PreparedSmoke = {
  session: StackSession;
  held: HeldAgents;
  plan: SmokePlan;
  /** The old versions of a comparison, read from the request's `compareWith` file. */
  old?: OldVersions;
};

/** `smoke`'s prologue: the stack opened from its state, its files valid, the calls planned on what it holds. */
export async function prepareSmoke(
  request: {
    stack: string;
    project: ProjectContext;
    selection: Selection;
    shard?: Shard | undefined;
    /** `pulumi stack output versions --json` saved before a deploy, or an earlier smoke --json report. */
    compareWith?: string | undefined;
  },
  warn: Warn,
): Promise<PreparedSmoke> {
  const session = await openValidStack(
    request.stack,
    { project: request.project, what: "reading the stack failed", readState: true },
    warn,
  );
  const address = session.connection.baseUrl;
  // A scenario's simulation knobs do nothing on a real service: say so before its calls.
  if (address !== undefined && !session.connection.loopback) {
    for (const warning of simulationWarnings(await session.agentFiles(), address))
      warn(`${formatDiagnostic(warning)}\n`);
  }
  const held = await session.held();
  if (Object.keys(held.agents).length === 0 && request.selection.versionId === undefined) {
    throw new ConfigError(`stack "${request.stack}" holds no agents: run \`pulumi up\` (or \`npm start\`) first`);
  }
  const plan = await planHeld(session, held, request, warn);
  return { session, held, plan, ...(request.compareWith ? { old: await readOldVersions(request.compareWith) } : {}) };
}
