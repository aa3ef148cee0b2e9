// `scenario derive` and `scenario generate`: the stack's agent file and the model (the caller
// model's settings, else the judge's), then src/drafts writes and vets the scenarios; with `check`,
// each kept scenario is placed once against the pinned version through the smoke job, and one that
// fails there is set apart with why (a finding about today's version, not a test).
import type { RetryNotice } from "../api/index.ts";
import { requirePersona } from "../caller/index.ts";
import type { CapturedCall } from "../capture/index.ts";
import type { AgentDefinition } from "../definitions/index.ts";
import {
  type Ask,
  type Drafted,
  deriveScenario,
  draftCount,
  draftYaml,
  generateScenarios,
  SCENARIOS,
} from "../drafts/index.ts";
import { ConfigError, InterruptedError, InvalidInputError } from "../errors/index.ts";
import { terminalText } from "../escape/index.ts";
import { type ChatMessage, ModelClient } from "../model/index.ts";
import type { ProjectContext } from "../settings/index.ts";
import { requireJudge } from "../settings/index.ts";
import { planSmoke, type ScenarioResult } from "../smoke/index.ts";
import { type CallRequest, readCall } from "./capture.ts";
import type { CommandOutcome, RunIO } from "./outcome.ts";
import { openSession, type ProjectSession, type StackSession } from "./session.ts";
import { runSmokeJob, smokeJobFrom } from "./smoke-job.ts";
import { openValidStack } from "./smoke-prologue.ts";

export type DraftRequest = {
  stack: string;
  project: ProjectContext;
  keepPii: boolean;
  maxCallMinutes?: number | undefined;
  /** Place each kept scenario once against the pinned version; keep only those that pass. */
  check: boolean;
};

type DraftIO = {
  /** Progress: the check's calls, retries. */
  out: { write(text: string): unknown };
  signal: AbortSignal;
  onRetry?: ((notice: RetryNotice) => void) | undefined;
};

type DraftResult = Drafted & {
  model: string;
  /** The kept scenarios as the YAML list to print (empty when none is kept). */
  yaml: string;
  /** "5 proposed, 4 kept: 1 named a tool the agent does not have" */
  count: string;
};

/** `scenario derive`: the call read like `scenario capture` reads it, then drafted for its agent (or `agent`). */
export type DeriveRequest = DraftRequest & CallRequest & { agent?: string | undefined; name?: string | undefined };

/** `scenario generate`: `count` scenarios drafted from the agent file of `agent` alone. */
export type GenerateRequest = DraftRequest & { agent: string; count: number };

/**
 * `scenario derive`: the report is the kept scenarios' YAML (empty when none is kept), the notes
 * say what was dropped, what failed on the pinned version and the count; the code is 0 when a
 * scenario was kept, else 1.
 */
export async function deriveDraft(request: DeriveRequest, io: RunIO): Promise<CommandOutcome<string>> {
  const call = await readCall(request, io);
  return drafted(io, (draftIO) => draftFromCall({ ...request, call }, draftIO));
}

/** `scenario generate`: its outcome as derive's. */
export async function generateDraft(request: GenerateRequest, io: RunIO): Promise<CommandOutcome<string>> {
  return drafted(io, (draftIO) => draftFromAgent(request, draftIO));
}

/** The drafting (Ctrl+C stops the model's request and the check's calls), and what it kept as the outcome. */
async function drafted(io: RunIO, draft: (io: DraftIO) => Promise<DraftResult>): Promise<CommandOutcome<string>> {
  const stop = io.interruption();
  const result = await draft({ out: io.out, signal: stop.signal, onRetry: io.onRetry }).finally(stop.release);
  // An interrupted check kept what it had not placed: nothing is printed of a run cut short.
  if (stop.signal.aborted) throw new InterruptedError(undefined, "nothing was printed");
  return { report: result.yaml, notes: draftNotes(result), code: result.kept.length > 0 ? 0 : 1 };
}

/** The lines said beside the kept scenarios: the model's notes, each dropped one with why, the count. */
function draftNotes(result: DraftResult): string[] {
  const notes = result.notes.map((note) => `note: ${terminalText(note)}\n`);
  const failed = result.dropped.filter((d) => d.kind === "failed the check");
  for (const drop of result.dropped.filter((d) => d.kind !== "failed the check")) {
    notes.push(`dropped ${terminalText(drop.name)}: ${terminalText(drop.kind)}: ${terminalText(drop.reason)}\n`);
  }
  if (failed.length > 0) {
    notes.push("failed on the pinned version (a finding about today's version, not a test):\n");
    for (const drop of failed) notes.push(`  ${terminalText(drop.name)}: ${terminalText(drop.reason)}\n`);
  }
  notes.push(`${terminalText(result.count)}\n`);
  return notes;
}

/** The call drafted for its agent (or `agent`): what derive's outcome is made of. */
export async function draftFromCall(
  request: DraftRequest & { call: CapturedCall; agent?: string | undefined; name?: string | undefined },
  io: DraftIO,
): Promise<DraftResult> {
  const key = request.agent ?? request.call.agent;
  if (!key) {
    throw new InvalidInputError(
      (name) => `the service's events do not say the call's agent: name it with ${name("agent")} KEY`,
      {
        field: "agent",
      },
    );
  }
  return drafting(request, key, io, (agent, model, ask) =>
    deriveScenario(
      {
        call: request.call,
        agent,
        model,
        name: request.name,
        keepPii: request.keepPii,
        maxCallMinutes: request.maxCallMinutes,
      },
      ask,
    ),
  );
}

/** The agent file's scenarios drafted: what generate's outcome is made of. */
export async function draftFromAgent(request: GenerateRequest, io: DraftIO): Promise<DraftResult> {
  return drafting(request, request.agent, io, (agent, model, ask) =>
    generateScenarios(
      { agent, model, count: request.count, keepPii: request.keepPii, maxCallMinutes: request.maxCallMinutes },
      ask,
    ),
  );
}

/** The agent, the model and (with `check`) the placing, around one way of drafting. */
async function drafting(
  request: DraftRequest,
  key: string,
  io: DraftIO,
  draft: (agent: AgentDefinition, model: string, ask: Ask) => Promise<Drafted>,
): Promise<DraftResult> {
  // Checking places calls on what the stack holds; drafting alone reads only its files and settings.
  const stack = request.check
    ? await openValidStack(request.stack, { project: request.project, readState: true }, (text) => io.out.write(text))
    : undefined;
  const session: ProjectSession =
    stack ?? (await openSession(request.stack, { project: request.project, source: "stack-or-file" }));
  const { agents } = await session.agentFiles();
  const agent = agents.find((a) => a.key === key);
  if (agent?.kind !== "conversational") {
    const known = agents.filter((a) => a.kind === "conversational").map((a) => a.key);
    throw new InvalidInputError(
      `no conversational agent "${key}" in the stack's agent files (agents: ${known.join(", ") || "none"})`,
      { field: "agent", value: key },
    );
  }
  const endpoint = requirePersona(session.caller.persona, "a model writes the scenarios", request.stack);
  if (stack) requireCheckJudge(stack, request.stack);
  const chat = new ModelClient("drafts", { ...endpoint, ...(io.onRetry ? { onRetry: io.onRetry } : {}) });
  const ask = async (messages: ChatMessage[]) =>
    (await chat.text(messages, { signal: io.signal, format: SCENARIOS })).content;
  let drafted: Drafted;
  try {
    drafted = await draft(agent, endpoint.model, ask);
  } catch (error) {
    // Ctrl+C aborts the model's request: the run stops there, with nothing printed.
    if (io.signal.aborted)
      throw new InterruptedError(undefined, "the model's request was stopped; nothing was printed");
    throw error;
  } finally {
    await chat.close();
  }
  if (stack && drafted.kept.length > 0) {
    drafted = await placeOnce(stack, agent, drafted, io);
  }
  return { ...drafted, model: endpoint.model, yaml: draftYaml(drafted), count: draftCount(drafted) };
}

/**
 * `--check` places the drafted scenarios, and the model is asked for judged expectations (one or two
 * rubrics each): with no judge the check cannot decide them, so that is said before the model is
 * asked, not after its proposals were made and thrown away.
 */
function requireCheckJudge(session: StackSession, stack: string): void {
  try {
    requireJudge(
      session.judge,
      "--check places each drafted scenario, and its rubrics (expect.judge) need a judge",
      stack,
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${error.message} Or leave out --check to have the scenarios printed unchecked.`);
  }
}

/** Each kept scenario placed once against the pinned version: those that fail there move to the dropped, with why. */
async function placeOnce(
  session: StackSession,
  agent: AgentDefinition,
  drafted: Drafted,
  io: DraftIO,
): Promise<Drafted> {
  const held = await session.held();
  const definitions = (await session.scenarioAgents(held)).map((d) =>
    d.key === agent.key ? { ...d, smoke: drafted.kept.map((k) => ({ ...k.parsed, iterations: 1 })) } : d,
  );
  const plan = planSmoke(definitions, held.agents, { agents: [agent.key] });
  const result = await runSmokeJob(smokeJobFrom(session, { plan, placement: { kind: "smoke" }, concurrency: 4 }), {
    out: io.out,
    signal: io.signal,
    ...(io.onRetry ? { onRetry: io.onRetry } : {}),
  });
  // A scenario with no call that passed is not kept: nothing unchecked is printed as checked.
  const results = result.kind === "ran" ? result.results : [];
  const kept = [];
  const dropped = [...drafted.dropped];
  for (const draft of drafted.kept) {
    const calls = results.filter((r) => r.scenario === draft.parsed.name);
    const failed = calls.find((r) => r.status !== "passed");
    if (calls.length > 0 && !failed) kept.push(draft);
    else dropped.push({ name: draft.parsed.name, kind: "failed the check", reason: failedWhy(failed) });
  }
  return { ...drafted, kept, dropped };
}

/** Why a checked call did not pass: its unmet expectations, else its error. */
function failedWhy(result: ScenarioResult | undefined): string {
  if (!result) return "it was not placed";
  const unmet = result.assertions
    .filter((a) => !a.passed)
    .map((a) => `${a.description}${a.detail ? ` (${a.detail})` : ""}`);
  const why = unmet.length > 0 ? unmet.join("; ") : (result.error ?? result.outcome.kind);
  return terminalText(`${result.status} on ${result.versionId}: ${why}`);
}
