// `scenario capture` (and derive): a real call as a draft scenario for the agent file. The call's events come
// from a recording (`smoke --record DIR`) or from the conversation's stream on the service, which
// need not replay an ended conversation's events: then this says so and points to recordings.
import { stat } from "node:fs/promises";
import type { Client, EventEnvelope } from "../api/index.ts";
import { type Captured, type CapturedCall, captureScenario } from "../capture/index.ts";
import { InterruptedError, InvalidInputError, ServiceError, TimeoutError } from "../errors/index.ts";
import type { Connection } from "../settings/index.ts";
import { findRecording, MAX_RECORDING_BYTES } from "../smoke/index.ts";
import { type RetryListener, withStackClient } from "./service-client.ts";

export type CaptureRequest = {
  conversationId: string;
  /** The draft scenario's name (default: from the conversation). */
  name?: string | undefined;
  /** The callee number to put in the draft's channel (the service's events do not say it). */
  calleeNo?: string | undefined;
};

/** The call as a draft scenario (scenario capture): its caller's lines, its tools, its channel. */
export function captureCall(call: CapturedCall, options: { name?: string | undefined }): Captured {
  return captureScenario(call, options);
}

/** The call of `conversationId` as its recording in `dir` holds it (what capture and derive read). */
export async function recordedCall(dir: string, request: CaptureRequest): Promise<CapturedCall> {
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
  request: CaptureRequest & { calleeNo: string; idleSeconds: number; connection: Connection; stack: string },
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
