// The caller's side of a conversation over its WebSocket session. The caller speaks when the agent
// has finished its turn: every agent message it started is completed, no tool call is open, and no
// event has come for QUIET_MS (the pause a person leaves before answering). A turn with `after`
// is said only once a completed agent message since the caller's previous line matches it; when
// the agent finished its turn without it, the call ends, failed, and says so. Each line must come
// back as `user.message.received`: a `server.error` while it is awaited, a session closed or
// ended first, or the call's deadline is "the caller's turn N was not delivered".
import type { EventEnvelope } from "../contract/index.ts";
import { NOT_THE_CALLER } from "../results/index.ts";
import type { CallerShape } from "./shape.ts";

/** No event for this long after the agent's last one, with nothing open: its turn is over. */
const QUIET_MS = 300;
/** A service whose agent does not greet: the caller speaks first after this long. */
const FIRST_TURN_WAIT_MS = 3000;

/** A line to say, optionally once the agent has said something ("/re/flags" or a phrase). */
type CallerTurn = { say: string; after?: string };

/** What the caller knows when it chooses its next line. */
export type CallerView = {
  /** The conversation so far, one line per message: `agent: …`, `caller: …`. */
  transcript: string[];
  /** Lines said so far. */
  said: number;
};

/** Where the caller's lines come from: a script, or a model playing a persona. `undefined`: nothing more to say. */
export type TurnSource = {
  /** `signal` ends the request when the call ends or the run stops. */
  next(view: CallerView, signal: AbortSignal): Promise<CallerTurn | undefined>;
  /** The most lines it may say (a persona's max_turns; a script's length). */
  readonly maxTurns: number;
  /** A persona may be done before maxTurns; a script says every line. A persona that says none played nothing. */
  readonly mayStopEarly?: boolean;
  /** A persona's model: the one asked, and the one its endpoint said answered (its last response's `model`). */
  readonly model?: { asked: string; answered: string | null };
};

/** A source's answer that is not a caller's line (a JSON object, a judge's verdict): the caller's error, never said. */
export class NotACallerLine extends Error {
  override name = "NotACallerLine";
}

/** Scripted turns, in order. */
export function scriptedTurns(turns: readonly (string | { say: string; after: string })[]): TurnSource {
  const list = turns.map((turn): CallerTurn => (typeof turn === "string" ? { say: turn } : turn));
  return {
    maxTurns: list.length,
    next: async (view) => list[view.said],
  };
}

/**
 * One line the caller said: its turn (from 1), its text, and on this machine's clock (epoch ms)
 * when it was sent, when the service showed it heard (`user.message.received`) and when the agent's
 * first word after it arrived (its next agent message event): the response latency the caller
 * lived, `firstWordAt − sentAt`.
 */
export type CallerLine = { turn: number; text: string; sentAt: number; heardAt?: number; firstWordAt?: number };

const normalized = (text: string) => text.replace(/\s+/g, " ").trim().toLowerCase();

/** Whether a `user.message.received` text is the caller's line (whitespace and case aside). */
export function isCallerLine(line: Pick<CallerLine, "text">, text: string): boolean {
  return normalized(line.text) === normalized(text);
}

export type CallerFailureKind =
  | "not_delivered"
  | "cue_missing"
  | "not_said"
  | "source_failed"
  | "silent"
  | "not_a_line";

/** Failures of the caller itself (a persona's model), not of the agent or the service: the call is an error, never evaluated. */
export const CALLER_OWN_FAILURES: readonly CallerFailureKind[] = ["source_failed", "silent", "not_a_line"];

export type CallerFailure = {
  kind: CallerFailureKind;
  turn: number;
  message: string;
  /** The caller ended the call itself (sent its end and closed the session): the conversation's end is not the agent's to show. */
  endedCall: boolean;
};

/** The session as the caller uses it. */
export type CallerPort = { send(message: Record<string, unknown>): void; close(): void };

export type CallerOptions = {
  /** Tests a completed agent message against a turn's `after`. */
  cue(pattern: string): (text: string) => boolean;
  quietMs?: number;
  firstTurnWaitMs?: number;
};

export class Caller {
  readonly lines: CallerLine[] = [];
  #failure: CallerFailure | undefined;
  readonly #source: TurnSource;
  readonly #port: CallerPort;
  readonly #shape: CallerShape;
  readonly #options: CallerOptions;
  readonly #transcript: string[] = [];
  readonly #openMessages = new Set<string>();
  readonly #openTools = new Set<string>();
  /** Completed agent messages since the caller's last line was heard. */
  #agentSaid: string[] = [];
  #awaiting: CallerLine | undefined;
  /** The last line heard, until the agent's first word after it. */
  #unanswered: CallerLine | undefined;
  /** The agent completed a message since the caller's last line (or, before any, at all). */
  #answered = false;
  #finished = false;
  #endSent = false;
  #ended = false;
  #busy = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #startedAt = Date.now();
  /** When the source was last asked for a line, and when the agent last completed a message. */
  #askedAt: number | undefined;
  #agentAt = 0;
  /** Ends a source's request in flight when the caller stops (the call ended, the run was stopped). */
  readonly #requests = new AbortController();

  constructor(source: TurnSource, port: CallerPort, shape: CallerShape, options: CallerOptions) {
    this.#source = source;
    this.#port = port;
    this.#shape = shape;
    this.#options = options;
  }

  get failure(): CallerFailure | undefined {
    return this.#failure;
  }

  /** Arms the first turn (the agent may greet first). */
  start(): void {
    this.#arm();
  }

  /** Every envelope of the session, in order; for a user line, whether it is the caller's. */
  observe(envelope: EventEnvelope): "caller" | "not_caller" | undefined {
    const payload = envelope.payload as { type: string; [key: string]: unknown };
    if (this.#failure || this.#ended) return payload.type === "user.message.received" ? "not_caller" : undefined;
    let by: "caller" | "not_caller" | undefined;
    switch (payload.type) {
      case "server.error":
        if (this.#awaiting) {
          const said = errorText(payload.error);
          this.#fail("not_delivered", this.#awaiting.turn, `the service answered with server.error${said}`);
          return undefined;
        }
        break;
      case "user.message.received": {
        const text = typeof payload.text === "string" ? payload.text : "";
        if (this.#awaiting && isCallerLine(this.#awaiting, text)) {
          this.#awaiting.heardAt = Date.now();
          this.#unanswered = this.#awaiting;
          this.#awaiting = undefined;
          this.#answered = false;
          this.#agentSaid = [];
          this.#transcript.push(`caller: ${text}`);
          by = "caller";
        } else {
          this.#transcript.push(`${NOT_THE_CALLER}: ${text}`);
          by = "not_caller";
        }
        break;
      }
      case "agent.message.delta":
        this.#firstWord();
        this.#openMessages.add(String(payload.generation_id));
        break;
      case "agent.message.completed": {
        this.#firstWord();
        this.#agentAt = Date.now();
        this.#openMessages.delete(String(payload.generation_id));
        const text = typeof payload.text === "string" ? payload.text : "";
        this.#agentSaid.push(text);
        this.#transcript.push(`agent: ${text}`);
        if (!this.#awaiting) this.#answered = true;
        break;
      }
      case "agent.tool_call.created":
        this.#openTools.add(String(payload.call_id));
        break;
      case "agent.tool_call.returned":
        this.#openTools.delete(String(payload.call_id));
        break;
      case "conversation.ended":
        this.#ended = true;
        this.stop();
        return undefined;
    }
    this.#arm();
    return by;
  }

  /**
   * After the stream: the failure, if any — a line sent and never heard, or lines left unsaid
   * because the conversation ended (or the deadline came) first.
   */
  settle(why: "ended" | "closed" | "deadline"): CallerFailure | undefined {
    this.stop();
    if (this.#failure) return this.#failure;
    const when =
      why === "ended"
        ? "before the conversation ended"
        : why === "deadline"
          ? "within the call's timeout"
          : "before the session closed";
    if (this.#awaiting) {
      this.#failure = {
        kind: "not_delivered",
        turn: this.#awaiting.turn,
        message: `the caller's turn ${this.#awaiting.turn} was not delivered: the service did not show it as user.message.received ${when}`,
        endedCall: false,
      };
    } else if (this.#writing(why)) {
      // The caller's model was still writing when the call ended: its line is missing, not the agent's.
      const turn = this.lines.length + 1;
      const whose = this.#source.mayStopEarly ? "the persona's model" : "the caller's model";
      this.#failure = {
        kind: "source_failed",
        turn,
        message: `the caller's turn ${turn} could not be written: ${whose} had not answered ${when}`,
        endedCall: false,
      };
    } else if (this.#source.mayStopEarly && this.lines.length === 0) {
      // A persona that said nothing played nothing: the agent was never tested by it.
      this.#failure = this.#busy
        ? {
            kind: "source_failed",
            turn: 1,
            message: `the caller's turn 1 could not be written: the persona's model had not answered ${when}`,
            endedCall: false,
          }
        : {
            kind: "silent",
            turn: 1,
            message: this.#finished
              ? "the caller said no line: the persona's model answered DONE before its first line"
              : `the caller said no line ${when}`,
            endedCall: false,
          };
    } else if (!this.#finished && !this.#source.mayStopEarly && this.lines.length < this.#source.maxTurns) {
      const turn = this.lines.length + 1;
      this.#failure = {
        kind: "not_said",
        turn,
        message: `the caller's turn ${turn} was never said: the agent did not finish its turn ${when}`,
        endedCall: false,
      };
    }
    return this.#failure;
  }

  /**
   * Whether the call ended while the caller's model was writing its next line, and that line was
   * the caller's to say: always before its first line; after it, unless the agent spoke since the
   * request began and then ended the conversation (a goodbye the model had not caught up with).
   */
  #writing(why: "ended" | "closed" | "deadline"): boolean {
    if (!this.#busy || this.#finished || this.#askedAt === undefined) return false;
    if (this.lines.length === 0 || why !== "ended") return true;
    return this.#agentAt <= this.#askedAt;
  }

  /** An agent message event arrived: the first after a heard line is the agent's first word to it. */
  #firstWord(): void {
    if (!this.#unanswered) return;
    this.#unanswered.firstWordAt = Date.now();
    this.#unanswered = undefined;
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#requests.abort();
  }

  #arm(): void {
    clearTimeout(this.#timer);
    if (this.#failure || this.#ended || this.#endSent) return;
    const quiet = this.#options.quietMs ?? QUIET_MS;
    const first = this.lines.length === 0 && !this.#answered;
    const wait = first
      ? Math.max(quiet, this.#startedAt + (this.#options.firstTurnWaitMs ?? FIRST_TURN_WAIT_MS) - Date.now())
      : quiet;
    this.#timer = setTimeout(() => void this.#due(), wait);
    this.#timer.unref?.();
  }

  /** The quiet pause passed: the caller speaks, if it is its turn. */
  async #due(): Promise<void> {
    if (this.#busy || this.#failure || this.#ended) return;
    if (this.#awaiting || this.#openMessages.size > 0 || this.#openTools.size > 0) return;
    if (this.lines.length > 0 && !this.#answered) return;
    this.#busy = true;
    try {
      if (this.#finished) return this.#sendEnd();
      let turn: CallerTurn | undefined;
      this.#askedAt = Date.now();
      try {
        turn =
          this.lines.length < this.#source.maxTurns
            ? await this.#source.next(
                { transcript: [...this.#transcript], said: this.lines.length },
                this.#requests.signal,
              )
            : undefined;
      } catch (error) {
        // A request the caller's own stop ended is not the source's failure: settle says what it means.
        if (this.#requests.signal.aborted) return;
        const kind = error instanceof NotACallerLine ? "not_a_line" : "source_failed";
        this.#fail(kind, this.lines.length + 1, (error as Error).message);
        return;
      }
      if (this.#failure || this.#ended) return;
      if (!turn) {
        this.#finished = true;
        return this.#sendEnd();
      }
      const number = this.lines.length + 1;
      if (turn.after !== undefined) {
        const cue = this.#options.cue(turn.after);
        if (!this.#agentSaid.some((text) => cue(text))) {
          this.#fail(
            "cue_missing",
            number,
            `the caller's turn ${number} waits for the agent to say ${turn.after}, and the agent finished its turn without it: the call was ended`,
          );
          return;
        }
      }
      const line: CallerLine = { turn: number, text: turn.say, sentAt: Date.now() };
      this.lines.push(line);
      this.#awaiting = line;
      try {
        this.#port.send(this.#shape.message(turn.say));
      } catch (error) {
        this.#fail("not_delivered", number, `it could not be sent (${(error as Error).message})`);
      }
    } finally {
      this.#busy = false;
    }
  }

  #sendEnd(): void {
    if (this.#endSent || !this.#shape.end) return;
    this.#endSent = true;
    try {
      this.#port.send(this.#shape.end);
    } catch {
      // The session is gone: the stream says how the call ended.
    }
  }

  #fail(kind: CallerFailureKind, turn: number, why: string): void {
    this.stop();
    const message =
      kind === "not_delivered"
        ? `the caller's turn ${turn} was not delivered: ${why}`
        : kind === "source_failed" || kind === "not_a_line"
          ? `the caller's turn ${turn} could not be written: ${why}`
          : why;
    this.#failure = { kind, turn, message, endedCall: true };
    this.#sendEnd();
    this.#port.close();
  }
}

function errorText(error: unknown): string {
  const message = error && typeof error === "object" ? (error as { message?: unknown }).message : error;
  return typeof message === "string" && message ? ` (${message.slice(0, 200)})` : "";
}
