// A scripted caller's rephrasings (`caller.variations: N`). The caller's model (the persona's
// endpoint and client, persona.ts) rephrases every turn N ways in one request per scenario per run,
// shared by all of that scenario's calls; call i says rephrasing (i − 1) mod N of each turn, in
// order, each turn's `after` kept, so the two sides of a comparison's pair (one iteration) hear the
// same words. The model's answer is data: N plain lines per turn, else every call of the scenario
// fails as the caller's own error (caller_not_a_line) with nothing said. The lines said reach the
// call's events and recording like any scripted line, so `--replay` needs no model.

import { hasControl } from "../escape/index.ts";
import type { ChatMessage } from "../model/index.ts";
import { NotACallerLine, type TurnSource } from "./script.ts";

/** A scripted turn as the scenario writes it. */
export type ScriptTurn = string | { say: string; after: string };

/** `lines[turn][variant]`, and the model its endpoint said answered. */
export type Rephrased = { lines: string[][]; answered: string | null };

/** What asks for the rephrasings: the caller's model (PersonaModel). */
export type Rephraser = {
  readonly model: string;
  rephrase(turns: readonly string[], n: number, signal: AbortSignal): Promise<Rephrased>;
};

/** The longest rephrasing taken (a persona's line is cut there). */
const MAX_LINE = 2000;

/** The request: the turns' lines only (never their `after`, the agent or its prompt). */
export function rephraseMessages(turns: readonly string[], n: number): ChatMessage[] {
  const system = [
    "You rephrase the lines a caller says in a test call to a conversational agent.",
    `Write each line ${n} different ways a caller could say it: the same meaning and the same facts (names, numbers, dates, times, what is asked for), in the same language; one or two sentences, no quotes, no numbering, no bullets.`,
    `Answer with one block per line, in the order given, the blocks separated by one empty line; each block exactly ${n} lines, one rephrasing per line. Nothing else.`,
  ].join("\n");
  const lines = turns.map((say, i) => `${i + 1}. ${JSON.stringify(say)}`).join("\n");
  return [
    { role: "system", content: system },
    { role: "user", content: `The caller's lines (${turns.length}):\n${lines}` },
  ];
}

/** Data rather than speech: JSON, a YAML document mark, list item, mapping key, comment, anchor, tag or block. */
const DATA = /^(?:[{[]|-(?:\s|$)|---|\.\.\.|[#&*!|>%@`]|["']?[\w-]+["']?\s*:(?:\s|$))/;

const shown = (text: string) => JSON.stringify(text.slice(0, 80));

/**
 * The model's answer as `[turn][variant]`: one block per turn (blocks apart by an empty line), each
 * of exactly `n` lines, each a plain line. Anything else is a NotACallerLine: never said.
 */
export function parseRephrasings(content: string, turns: number, n: number): string[][] {
  const wrong = (why: string) =>
    new NotACallerLine(
      `the caller's model did not rephrase the turns as asked (${turns} block(s) of ${n} line(s)): ${why}`,
    );
  const text = content.replace(/\r\n/g, "\n").trim();
  if (text === "") throw wrong("its answer is empty");
  const blocks = text.split(/\n(?:[ \t]*\n)+/);
  if (blocks.length !== turns) throw wrong(`it answered ${blocks.length} block(s)`);
  return blocks.map((block, t) => {
    const lines = block.split("\n").map((line) => line.trim().replace(/^"(.*)"$/s, "$1"));
    if (lines.length !== n) throw wrong(`turn ${t + 1} has ${lines.length} line(s)`);
    for (const [v, line] of lines.entries()) {
      const which = `turn ${t + 1}'s rephrasing ${v + 1}`;
      if (line === "") throw wrong(`${which} is empty`);
      if (hasControl(line)) throw wrong(`${which} holds a control character: ${shown(line)}`);
      if (DATA.test(line)) throw wrong(`${which} reads as data (JSON or YAML), not a caller's line: ${shown(line)}`);
      if (line.length > MAX_LINE) throw wrong(`${which} is longer than ${MAX_LINE} characters`);
    }
    return lines;
  });
}

/** The promise's value, or the signal's reason once it is aborted (the shared request goes on for the other calls). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** One run's rephrasings: asked once per scenario at its first call's first turn, shared by all of its calls. */
export class Rephrasings {
  readonly #asked = new Map<string, Promise<Rephrased>>();
  readonly #model: Rephraser;
  /** The run's: stopping the run ends the request, one call's end does not. */
  readonly #signal: AbortSignal;

  constructor(model: Rephraser, signal: AbortSignal) {
    this.#model = model;
    this.#signal = signal;
  }

  /** The lines of call `iteration` (from 1) of scenario `key`: each turn's rephrasing (iteration − 1) mod n. */
  turns(key: string, turns: readonly ScriptTurn[], n: number, iteration: number): TurnSource {
    const list = turns.map((turn) => (typeof turn === "string" ? { say: turn } : turn));
    const variant = (iteration - 1) % n;
    const model = { asked: this.#model.model, answered: null as string | null };
    const ask = () => {
      let asked = this.#asked.get(key);
      if (!asked) {
        asked = this.#model.rephrase(
          list.map((turn) => turn.say),
          n,
          this.#signal,
        );
        // Each call that needs it hears the failure; an unawaited one is not the process's.
        asked.catch(() => {});
        this.#asked.set(key, asked);
      }
      return asked;
    };
    return {
      maxTurns: list.length,
      model,
      next: async (view, signal) => {
        const turn = list[view.said];
        if (!turn) return undefined;
        const rephrased = await untilAborted(ask(), signal);
        model.answered = rephrased.answered;
        return { ...turn, say: rephrased.lines[view.said]?.[variant] as string };
      },
    };
  }
}
