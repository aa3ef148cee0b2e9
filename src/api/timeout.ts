// The one timeout helper of the client. A Deadline is the AbortSignal of one exchange: aborted by
// the caller's signal (with the caller's reason) or, when its time runs out, with the typed error
// its owner makes. A request's whole-response deadline runs once; a stream's idle timeout is
// restarted by each new event and paused while the consumer holds one (its time is not the
// service's). Waits between attempts use node:timers/promises.
import { setTimeout as delay } from "node:timers/promises";

export class Deadline {
  readonly #controller = new AbortController();
  readonly #caller: AbortSignal | undefined;
  readonly #ms: number;
  readonly #onTimeout: () => Error;
  #timer: NodeJS.Timeout | undefined;
  #expired: Error | undefined;

  /** `ms` of 0 or Infinity: no time limit (the caller's signal still applies). */
  constructor(caller: AbortSignal | undefined, ms: number, onTimeout: () => Error) {
    this.#caller = caller;
    this.#ms = ms;
    this.#onTimeout = onTimeout;
    if (caller?.aborted) this.#controller.abort(caller.reason);
    else caller?.addEventListener("abort", this.#onCallerAbort, { once: true });
    this.restart();
  }

  readonly #onCallerAbort = () => this.#abort(this.#caller?.reason);

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The timeout error, once the time has run out. */
  get expired(): Error | undefined {
    return this.#expired;
  }

  /** Whether the caller's signal ended it (then its reason is the one to throw). */
  get callerAborted(): boolean {
    return this.#caller?.aborted === true;
  }

  /** Starts the time again. */
  restart(): void {
    this.pause();
    if (this.#controller.signal.aborted || !(this.#ms > 0 && Number.isFinite(this.#ms))) return;
    this.#timer = setTimeout(() => {
      this.#expired = this.#onTimeout();
      this.#abort(this.#expired);
    }, this.#ms);
  }

  /** Stops the time until the next `restart`. */
  pause(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Ends it: the timer, the caller's listener, and anything still using the signal. */
  dispose(): void {
    this.#abort(new Error("closed"));
  }

  #abort(reason: unknown): void {
    this.pause();
    this.#caller?.removeEventListener("abort", this.#onCallerAbort);
    if (!this.#controller.signal.aborted) this.#controller.abort(reason);
  }
}

/** Waits `ms`; an aborted signal ends the wait with the signal's own reason. */
export async function wait(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, signal ? { signal } : {});
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw error;
  }
}
