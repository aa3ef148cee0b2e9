// Recordings of smoke calls and their offline replay. A recording is one JSON Lines file per call:
// a header (agent, the scenario as it was, iteration, pinned version), every event envelope as
// received, and a footer (how the call ended, its procedures). No token is ever written: envelopes
// carry none and the stream address is stored without it. Replay evaluates the scenarios' current
// expectations against the recorded events, with no network.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { EventEnvelope } from "../api/index.ts";
import type { CallerFailure, CallerLine } from "../caller/index.ts";
import { conversationalAgentRef, eventEnvelope, issuesText, type Transport } from "../contract/index.ts";
import type { AgentDefinition, SmokeScenario } from "../definitions/index.ts";
import { agentKey, requiredPasses } from "../definitions/index.ts";
import { InvalidInputError } from "../errors/index.ts";
import type { Judge } from "../judge/index.ts";
import {
  callOutcomeSchema,
  callStatus,
  evaluated,
  legacyOutcome,
  type CallOutcome as ReportOutcome,
} from "../results/index.ts";
import {
  applyCallerFailure,
  callerHeard,
  checkCaller,
  gateOf,
  judgeResult,
  observeCall,
  type PlannedCall,
} from "./call.ts";
import type { ObservedProcedure } from "./expectations.ts";
import { addDrift, type Drift, driftLines } from "./observe.ts";
import { CALLER_FAILURE_CODES, type CallOutcome, OUTCOME_CODES, outcomeFromReport, reportOutcome } from "./outcome.ts";
import { type ScenarioResult, statusOf } from "./reports.ts";
import { renderEntry } from "./transcript.ts";

const RECORDING_FORMAT = "agent-iac-recording";
const MAX_RECORDINGS = 10_000;
/** The most a recording may hold, and so the most of one call's events `scenario capture` keeps. */
export const MAX_RECORDING_BYTES = 64 * 1024 * 1024;

type Header = {
  format: typeof RECORDING_FORMAT;
  version: 1;
  agent: string;
  scenario: SmokeScenario;
  iteration: number;
  version_id: string;
  transport: Transport;
  livemode: boolean;
  conversation_id: string | null;
  events_url: string | null;
  started_at: string | null;
};
type Footer = {
  end: true;
  status: ScenarioResult["status"];
  /** How the call ended (the report's shape); a recording made before outcomes has only `status`. */
  outcome?: ReportOutcome;
  error: string | null;
  duration_ms: number;
  /** The duration the expectations saw (max_duration_sec). */
  duration_sec: number;
  procedures: ObservedProcedure[];
  /** The caller's lines with this machine's times (a replay measures response latency as the call did). */
  caller_lines?: CallerLine[];
  /** Why the caller failed the call, when it did. */
  caller_failure?: CallerFailure;
};

/** The footer's caller lines that are whole (a hand-edited or older recording may have none). */
function recordedCallerLines(footer: Footer | undefined): CallerLine[] {
  const lines = Array.isArray(footer?.caller_lines) ? footer.caller_lines : [];
  const time = (value: unknown) => typeof value === "number" && Number.isFinite(value);
  return lines
    .filter((l) => l && typeof l.text === "string" && typeof l.turn === "number" && time(l.sentAt))
    .map(({ turn, text, sentAt, heardAt, firstWordAt }) => ({
      turn,
      text,
      sentAt,
      ...(time(heardAt) ? { heardAt } : {}),
      ...(time(firstWordAt) ? { firstWordAt } : {}),
    }));
}

const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 60);

/** `<dir>/<agent>/<scenario>-<hash>.<iteration>.jsonl`: readable, and distinct for names that clean up alike. */
function recordingPath(dir: string, agent: string, scenario: string, iteration: number): string {
  const hash = createHash("sha256").update(`${agent}\u0000${scenario}`).digest("hex").slice(0, 8);
  return path.join(dir, safe(agent), `${safe(scenario)}-${hash}.${iteration}.jsonl`);
}

/** Writes one call's recording (its envelopes as received). */
export async function writeRecording(dir: string, call: PlannedCall, result: ScenarioResult): Promise<string> {
  const file = recordingPath(dir, call.agent, call.scenario.name, call.iteration);
  const header: Header = {
    format: RECORDING_FORMAT,
    version: 1,
    agent: call.agent,
    scenario: call.scenario,
    iteration: call.iteration,
    version_id: call.versionId,
    transport: call.scenario.transport,
    livemode: result.livemode ?? false,
    conversation_id: result.conversationId ?? null,
    events_url: result.eventsUrl ?? null,
    started_at: result.startedAt ?? null,
  };
  const footer: Footer = {
    end: true,
    status: result.status,
    outcome: reportOutcome(result.outcome),
    error: result.error ?? null,
    duration_ms: result.timings.durationMs,
    duration_sec: result.observation?.durationSec ?? result.timings.durationMs / 1000,
    procedures: result.observation?.procedures ?? [],
    ...(result.callerLines ? { caller_lines: result.callerLines } : {}),
    ...(result.callerFailure ? { caller_failure: result.callerFailure } : {}),
  };
  const lines = [header, ...(result.envelopes ?? []), footer].map((value) => JSON.stringify(value));
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}

/** What a recording's header names: an agent key and a conversational agent version, as smoke wrote them. */
const headerNames = z.looseObject({ agent: agentKey, version_id: conversationalAgentRef });

type Recording = { file: string; header: Header; envelopes: EventEnvelope[]; footer: Footer | undefined };

/** The replay directory cannot be used: an InvalidInputError on the field `replay`. */
const invalidReplay = (dir: string, problem: string) =>
  new InvalidInputError((name) => `${name("replay")} ${dir}: ${problem}`, { field: "replay", value: dir });

/** A recording in the replay directory cannot be used (`file:line: problem`). */
const invalidRecording = (where: string, problem: string) =>
  new InvalidInputError(`${where}: ${problem}`, { field: "replay", value: where });

async function recordingFiles(dir: string): Promise<string[]> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) throw invalidReplay(dir, "no such directory of recordings");
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
  if (files.length > MAX_RECORDINGS) throw invalidReplay(dir, `more than ${MAX_RECORDINGS} recordings`);
  return files;
}

/** Reads one recording; a line that is not what it should be is an InvalidInputError naming file:line. */
async function readRecording(file: string): Promise<Recording> {
  const info = await stat(file);
  if (info.size > MAX_RECORDING_BYTES) throw invalidRecording(file, `larger than ${MAX_RECORDING_BYTES} bytes`);
  const lines = (await readFile(file, "utf8")).split("\n");
  const parse = (line: string, n: number): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      throw invalidRecording(`${file}:${n}`, "not JSON");
    }
  };
  const header = parse(lines[0] ?? "", 1) as Header;
  if (header?.format !== RECORDING_FORMAT || typeof header.agent !== "string" || !header.scenario?.name) {
    throw invalidRecording(
      `${file}:1`,
      `not an agent-iac recording (its first line names format "${RECORDING_FORMAT}")`,
    );
  }
  // A recording may come from someone else, and replay and capture print its agent and version.
  const named = headerNames.safeParse(header);
  if (!named.success) throw invalidRecording(`${file}:1`, `the header's ${issuesText(named.error)}`);
  const envelopes: EventEnvelope[] = [];
  let footer: Footer | undefined;
  for (const [i, line] of lines.slice(1).entries()) {
    if (line.trim() === "") continue;
    const value = parse(line, i + 2) as { end?: unknown };
    if (value?.end === true) {
      footer = value as Footer;
      continue;
    }
    const envelope = eventEnvelope.safeParse(value);
    if (!envelope.success)
      throw invalidRecording(`${file}:${i + 2}`, "not an event envelope (id, created_at, payload.type)");
    envelopes.push(envelope.data);
  }
  return { file, header, envelopes, footer };
}

/** One recorded call, found by its conversation id (what `scenario capture --from-recording` reads). */
type FoundRecording = {
  file: string;
  agent: string;
  scenario: SmokeScenario;
  versionId: string;
  envelopes: EventEnvelope[];
  /** The lines the scenario's caller sent, when it had one: only these are the caller's. */
  callerLines?: string[];
  /** The procedures that ran after the call, by procedural agent key, with their terminal status. */
  procedures: Record<string, string>;
};

/** The recording of conversation `conversationId` in `dir`, or undefined when none holds it. */
export async function findRecording(dir: string, conversationId: string): Promise<FoundRecording | undefined> {
  for (const file of await recordingFiles(dir)) {
    const recording = await readRecording(file);
    if (recording.header.conversation_id !== conversationId) continue;
    const { agent, scenario, version_id } = recording.header;
    const callerLines = scenario.caller ? recordedCallerLines(recording.footer).map((line) => line.text) : undefined;
    return {
      file,
      agent,
      scenario,
      versionId: version_id,
      envelopes: recording.envelopes,
      ...(callerLines ? { callerLines } : {}),
      procedures: Object.fromEntries(
        (Array.isArray(recording.footer?.procedures) ? recording.footer.procedures : [])
          .filter((p) => typeof p?.key === "string" && typeof p.status === "string")
          .map((p) => [p.key, p.status as string]),
      ),
    };
  }
  return undefined;
}

export type Replay = { results: ScenarioResult[]; drift: Drift; notes: string[] };

/**
 * Re-evaluates the current expectations of the agents' scenarios against recorded calls. A
 * recording whose scenario is gone is skipped (and said); the threshold is judged on the
 * iterations recorded.
 */
export async function replayRecordings(
  dir: string,
  definitions: readonly AgentDefinition[],
  only: {
    agents?: string[] | undefined;
    scenarios?: string[] | undefined;
    /** The judge of the scenarios recorded (each `agent\u0000scenario`), set up once they are known. */
    judgeFor?: ((recorded: ReadonlySet<string>) => Promise<Judge | undefined>) | undefined;
  } = {},
): Promise<Replay> {
  const selected = (r: Recording) =>
    (!only.agents?.length || only.agents.includes(r.header.agent)) &&
    (!only.scenarios?.length || only.scenarios.includes(r.header.scenario.name));
  const recordings = (await Promise.all((await recordingFiles(dir)).map(readRecording))).filter(selected);
  if (recordings.length === 0) throw invalidReplay(dir, "no recordings (*.jsonl) of the selected scenarios in it");
  // Only a recorded scenario is replayed, so only its rubrics need a judge.
  const judge = await only.judgeFor?.(
    new Set(recordings.map((r) => `${r.header.agent}\u0000${r.header.scenario.name}`)),
  );
  const drift: Drift = { eventTypes: {}, fields: {} };
  const notes: string[] = [];
  const byScenario = new Map<string, Recording[]>();
  for (const recording of recordings) {
    const { agent, scenario } = recording.header;
    const key = `${agent}\u0000${scenario.name}`;
    byScenario.set(key, [...(byScenario.get(key) ?? []), recording]);
  }
  const results: ScenarioResult[] = [];
  for (const list of byScenario.values()) {
    const { agent, scenario: recorded } = (list[0] as Recording).header;
    const scenario = definitions.find((d) => d.key === agent)?.smoke.find((s) => s.name === recorded.name);
    if (!scenario) {
      notes.push(
        `skipped ${list.length} recording(s) of ${agent}/${recorded.name}: no such scenario in the agent files now`,
      );
      continue;
    }
    const gate = gateOf(scenario);
    if (list.length !== scenario.iterations) {
      notes.push(
        `${agent}/${scenario.name}: ${list.length} recorded iteration(s), the file now says ${scenario.iterations}; judged on the recorded ones`,
      );
      gate.plannedIterations = list.length;
      gate.minPass = Math.min(list.length, requiredPasses({ ...scenario, iterations: list.length }));
    }
    for (const recording of list.sort((a, b) => a.header.iteration - b.header.iteration)) {
      addDrift(drift, recording.envelopes);
      results.push(await replayOne(recording, scenario, gate, judge));
    }
  }
  notes.push(...driftLines(drift));
  return { results, drift, notes };
}

async function replayOne(
  recording: Recording,
  scenario: SmokeScenario,
  gate: ReturnType<typeof gateOf>,
  judge: Judge | undefined,
): Promise<ScenarioResult> {
  const { header, footer, envelopes } = recording;
  const durationMs = footer?.duration_ms ?? 0;
  const durationSec = typeof footer?.duration_sec === "number" ? footer.duration_sec : durationMs / 1000;
  // The caller's lines are the recorded user messages: labelled as the caller's in the transcript.
  const callerLines = header.scenario.caller ? recordedCallerLines(footer) : undefined;
  const { observation, latency } = observeCall(envelopes, durationSec, footer?.procedures ?? [], callerLines);
  const result: ScenarioResult = {
    agent: header.agent,
    scenario: scenario.name,
    iteration: header.iteration,
    versionId: header.version_id,
    ...(header.conversation_id ? { conversationId: header.conversation_id } : {}),
    ...(header.events_url ? { eventsUrl: header.events_url } : {}),
    transport: header.transport,
    status: "error",
    outcome: recordedOutcome(footer),
    assertions: [],
    observation,
    latency,
    timings: { durationMs },
    gate,
    ...(header.started_at ? { startedAt: header.started_at } : {}),
    livemode: header.livemode,
  };
  // A call that did not complete stays so: its recording is not a whole call to judge. One whose
  // caller strayed is whole: it is checked again.
  if (!evaluated(result.outcome.kind) && result.outcome.kind !== "inconclusive") {
    result.status = statusOf(result.outcome.kind);
    result.error = footer?.error ?? "the recording ends before the call did";
    return result;
  }
  if (callerLines) result.callerLines = callerLines;
  // A caller that failed the call fails it again, whatever the expectations say of the rest.
  const failure = recordedCallerFailure(footer, result.outcome, callerLines ?? []);
  if (failure) applyCallerFailure(result, scenario, failure);
  else {
    await judgeResult(result, scenario, judge);
    callerHeard(result, callerLines);
    await checkCaller(result, scenario, judge);
  }
  return result;
}

const CALLER_FAILURE_KINDS = Object.keys(CALLER_FAILURE_CODES);

/**
 * The caller's failure of a recorded call: the footer's; a recording made before it was kept has
 * only the code of a line not heard (the last one sent).
 */
function recordedCallerFailure(
  footer: Footer | undefined,
  outcome: CallOutcome,
  lines: readonly CallerLine[],
): CallerFailure | undefined {
  const kept = footer?.caller_failure;
  if (
    kept &&
    CALLER_FAILURE_KINDS.includes(kept.kind) &&
    Number.isInteger(kept.turn) &&
    typeof kept.message === "string" &&
    typeof kept.endedCall === "boolean"
  ) {
    return { kind: kept.kind, turn: kept.turn, message: kept.message, endedCall: kept.endedCall };
  }
  if (outcome.code !== OUTCOME_CODES.callerNotHeard) return undefined;
  const message = footer?.error ?? "the caller was not heard";
  return { kind: "not_delivered", turn: lines.at(-1)?.turn ?? 1, message, endedCall: false };
}

/** How a recorded call ended: its footer's outcome, else (an older recording) its status; no footer, an error. */
function recordedOutcome(footer: Footer | undefined): CallOutcome {
  if (!footer) return { kind: "error" };
  const outcome = callOutcomeSchema.safeParse(footer.outcome);
  if (outcome.success) return outcomeFromReport(outcome.data);
  const status = callStatus.safeParse(footer.status);
  return status.success ? outcomeFromReport(legacyOutcome({ status: status.data })) : { kind: "error" };
}

/** A recording's transcript as display lines (what the judge sees), for labelled files. */
export async function recordingTranscript(file: string): Promise<string[]> {
  const { envelopes } = await readRecording(file);
  return observeCall(envelopes, 0, []).observation.entries.map(renderEntry);
}
