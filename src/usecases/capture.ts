// `scenario capture` (and derive): a real call as a draft scenario for the agent file. The call's events come
// from a recording (`smoke --record DIR`) or from the conversation's stream on the service, which
// need not replay an ended conversation's events: then this says so and points to recordings.
import { stat } from "node:fs/promises";
import type { Client, EventEnvelope } from "../api/index.ts";
import { type CapturedCall, captureScenario as scenarioOf } from "../capture/index.ts";
import { InterruptedError, InvalidInputError, ServiceError, TimeoutError } from "../errors/index.ts";
import { terminalText } from "../escape/index.ts";
import type { Connection, ProjectContext } from "../settings/index.ts";
import { findRecording, MAX_RECORDING_BYTES } from "../smoke/index.ts";
import type { CommandOutcome, RunIO } from "./outcome.ts";
import { type RetryListener, withStackClient } from "./service-client.ts";
import { stackConnection } from "./session.ts";

/** The call of a conversation, and the callee number to put in its channel. */
type CallId = {
  conversationId: string;
  /** The callee number to put in the draft's channel (the service's events do not say it). */
  calleeNo?: string | undefined;
};

/** Where a call is read from (what capture and derive share): a recording, else the stack's service. */
export type CallRequest = CallId & {
  project: ProjectContext;
  /** Read the call from the recordings in this directory (relative to the project), not from the service. */
  fromRecording?: string | undefined;
  stack: string;
  /** The service's address instead of the stack's. */
  baseUrl?: string | undefined;
  /** From the service: give up when its stream sends nothing for this long. */
  idleSeconds: number;
};

export type CaptureRequest = CallRequest & {
  /** The draft scenario's name (default: from the conversation). */
  name?: string | undefined;
};

/**
 * `scenario capture`: the call as a draft scenario (its caller's lines, its tools, its channel).
 * The report is the YAML to print; the notes say what the draft could not carry over and what it holds.
 */
export async function captureScenario(request: CaptureRequest, io: RunIO): Promise<CommandOutcome<string>> {
  const call = await readCall(request, io);
  const captured = scenarioOf(call, { name: request.name });
  const notes = captured.notes.map((note) => `note: ${note}\n`);
  notes.push(
    `captured ${captured.turns} caller turn(s) and ${captured.toolCalls.length} tool(s) from ${terminalText(request.conversationId)}\n`,
  );
  return { report: captured.yaml, notes, code: 0 };
}

/**
 * The call of `conversationId`: from a recording, or from the service's stream (the stack's
 * connection, said to `io`; Ctrl+C closes the stream). From the service the callee number is
 * required: its events do not say the channel.
 */
export async function readCall(request: CallRequest, io: RunIO): Promise<CapturedCall> {
  const dir = request.project.path(request.fromRecording);
  if (dir) return recordedCall(dir, request);
  const { calleeNo } = request;
  if (!calleeNo) {
    throw new InvalidInputError(
      (name) => `${name("calleeNo")} is needed to capture from the service: its events do not say the channel`,
      { field: "calleeNo", hint: (name) => `or capture from a recording of the call: ${name("fromRecording")} DIR` },
    );
  }
  const connection = await stackConnection(request.project, request.stack, { baseUrl: request.baseUrl });
  io.useConnection(connection);
  const stop = io.interruption();
  return serviceCall({ ...request, calleeNo, connection }, { signal: stop.signal, onRetry: io.onRetry }).finally(
    stop.release,
  );
}

/** The call of `conversationId` as its recording in `dir` holds it (what capture and derive read). */
export async function recordedCall(dir: string, request: CallId): Promise<CapturedCall> {
  const given = { field: "fromRecording" as const, value: dir };
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    throw new InvalidInputError((name) => `${name("fromRecording")} ${dir}: no such directory of recordings`, given);
  }
  const found = await findRecording(dir, request.conversationId);
  if (!found) {
    throw new InvalidInputError(
      (name) => `${name("fromRecording")} ${dir}: no recording of conversation ${request.conversationId}`,
      {
        ...given,
        hint: "recordings are written by `agent-iac smoke --record DIR`; each names its conversation id on its first line",
      },
    );
  }
  const { channel, context } = found.scenario;
  return {
    conversationId: request.conversationId,
    envelopes: found.envelopes,
    agent: found.agent,
    versionId: found.versionId,
    channel: request.calleeNo ? { ...channel, callee_no: request.calleeNo } : channel,
    context,
    callerLines: found.callerLines,
    procedures: found.procedures,
  };
}

/**
 * The call of `conversationId` from its event stream on the stack's service (what capture and
 * derive read): read until `conversation.ended`, a stream silent for `idleSeconds`, or `signal` (an
 * InterruptedError); at most what a recording may hold. The client is opened here and closed after.
 */
export async function serviceCall(
  request: CallId & { calleeNo: string; idleSeconds: number; connection: Connection; stack: string },
  io: { signal: AbortSignal; onRetry?: RetryListener | undefined },
): Promise<CapturedCall> {
  const envelopes = await withStackClient(request.connection, request.stack, io.onRetry, (client) =>
    readCallEvents(request, { client, signal: io.signal }),
  );
  const { conversationId } = request;
  if (!envelopes.some((envelope) => envelope.payload.type === "conversation.started")) {
    throw new ServiceError(
      `the service did not replay conversation ${conversationId}'s events (nothing for ${request.idleSeconds} s): the interface does not promise the stream of an ended conversation`,
      {
        hint: "record the calls as they happen with `agent-iac smoke --record DIR`, then `agent-iac scenario capture <id> --from-recording DIR`",
      },
    );
  }
  return { conversationId, envelopes, channel: { callee_no: request.calleeNo } };
}

/** The stream's envelopes up to conversation.ended (or an idle stream), at most a recording's bytes. */
async function readCallEvents(
  request: { conversationId: string; idleSeconds: number },
  io: { client: Client; signal: AbortSignal },
): Promise<EventEnvelope[]> {
  const { conversationId } = request;
  const envelopes: EventEnvelope[] = [];
  // A stream that never ends is not kept whole: a capture holds at most what a recording may.
  let bytes = 0;
  try {
    const stream = io.client.conversations.events(conversationId, {
      idleTimeoutMs: request.idleSeconds * 1000,
      signal: io.signal,
    });
    for await (const envelope of stream) {
      bytes += Buffer.byteLength(JSON.stringify(envelope));
      if (bytes > MAX_RECORDING_BYTES) {
        throw new ServiceError(
          `the service's stream of conversation ${conversationId} sent more than ${MAX_RECORDING_BYTES} bytes of events (${envelopes.length} events) without conversation.ended: stopped reading, nothing captured (a capture keeps at most what a recording may hold)`,
          {
            hint: "capture a call that has ended, or record the calls as they happen with `agent-iac smoke --record DIR`",
          },
        );
      }
      envelopes.push(envelope);
      if (envelope.payload.type === "conversation.ended") break;
    }
  } catch (error) {
    if (io.signal.aborted) {
      throw new InterruptedError(undefined, `the stream was closed after ${envelopes.length} event(s)`);
    }
    if (!(error instanceof TimeoutError && error.limit === "idle")) throw error;
  }
  return envelopes;
}
