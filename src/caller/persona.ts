// A persona caller: a model the team names (an OpenAI-compatible Chat Completions endpoint,
// `agents:callerBaseUrl` / `agents:callerModel` / `agents:callerApiKey`, the judge's settings where
// these are unset) is given the persona, the goal and the transcript so far, and answers the
// caller's next line or DONE. Nothing plays a persona by default. Requests go through the service
// client's request core: a deadline, bounded retries, and the key removed from every error text.
// The lines it writes reach the conversation's events as `user.message.received`, so a recording
// holds them and `--replay` re-evaluates the call with no model. The same model rephrases a scripted
// caller's turns (`caller.variations`, variations.ts).
import { ConfigError } from "../errors/index.ts";
import { type ChatMessage, ModelClient, type ModelEndpoint } from "../model/index.ts";
import { PERSONA_KEYS, type PersonaSettings } from "../settings/index.ts";
import { type CallerView, NotACallerLine, type TurnSource } from "./script.ts";
import { parseRephrasings, type Rephrased, rephraseMessages } from "./variations.ts";

export type PersonaEndpoint = ModelEndpoint;

/** The word the model answers when the caller is done. */
const DONE = "DONE";

/** The persona model with address and model, or a ConfigError naming the settings (exit 2, before any call). */
export function requirePersona(
  persona: PersonaSettings | undefined,
  why: string,
  stack?: string,
  task = "to play it",
): PersonaEndpoint {
  const settings: Partial<PersonaSettings> = persona ?? {};
  if (settings.baseUrl && settings.model && settings.timeoutSec !== undefined) {
    return {
      baseUrl: settings.baseUrl,
      model: settings.model,
      timeoutSec: settings.timeoutSec,
      ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    };
  }
  const on = stack ? ` for stack ${stack}` : "";
  const missing = [
    settings.baseUrl
      ? undefined
      : `${PERSONA_KEYS.baseUrl.config} (or ${PERSONA_KEYS.baseUrl.env}, or the judge's agents:judgeBaseUrl)`,
    settings.model
      ? undefined
      : `${PERSONA_KEYS.model.config} (or ${PERSONA_KEYS.model.env}, or the judge's agents:judgeModel)`,
  ].filter(Boolean);
  throw new ConfigError(
    `${why}, but no model is configured ${task}${on}: set ${missing.join(" and ")}; the key, if the endpoint needs one, with \`pulumi config set --secret ${PERSONA_KEYS.apiKey.config}\` or ${PERSONA_KEYS.apiKey.env}. Nothing was called.`,
  );
}

/** The messages that ask for the caller's next line. */
function personaMessages(persona: string, goal: string | undefined, view: CallerView): ChatMessage[] {
  const system = [
    "You play the caller in a test call to a conversational agent. Stay in character.",
    `The caller: ${persona}`,
    goal ? `The caller's goal: ${goal}` : "The caller has no goal beyond the conversation itself.",
    `Answer with the caller's next line only: one or two sentences, no quotes, no stage directions. When the goal is reached, or the call cannot go further, answer exactly ${DONE}.`,
  ].join("\n");
  const transcript = view.transcript.length > 0 ? view.transcript.join("\n") : "(nothing has been said yet)";
  return [
    { role: "system", content: system },
    { role: "user", content: `The conversation so far:\n${transcript}\n\nThe caller's next line:` },
  ];
}

/** A JSON object or array, or a judge's verdict in prose: what a model answers when it is not playing a caller. */
function isStructured(content: string): boolean {
  if (/"verdict"\s*:/.test(content)) return true;
  if (!/^[{[]/.test(content)) return false;
  try {
    JSON.parse(content);
    return true;
  } catch {
    return false;
  }
}

export class PersonaModel {
  /** The persona's lines: the caller's endpoint. */
  readonly #caller: ModelClient;
  /** The rephrasings of scripted turns: the same endpoint, named apart in its errors. */
  readonly #variations: ModelClient;

  constructor(endpoint: PersonaEndpoint) {
    this.#caller = new ModelClient("caller", endpoint);
    this.#variations = new ModelClient("variations", endpoint);
  }

  /** The model asked. */
  get model(): string {
    return this.#caller.model;
  }

  /** Whether the endpoint takes the key (before any call; see ModelClient.checkKey): as `use` names it. */
  checkKey(use: "caller" | "variations", signal?: AbortSignal): Promise<void> {
    return (use === "caller" ? this.#caller : this.#variations).checkKey(signal);
  }

  /** A scripted caller's turns rephrased `n` ways each (`caller.variations`): one request. */
  async rephrase(turns: readonly string[], n: number, signal: AbortSignal): Promise<Rephrased> {
    const answer = await this.#variations.text(rephraseMessages(turns, n), { signal });
    const lines = parseRephrasings(answer.content, turns.length, n);
    return { lines, answered: answer.answered ?? null };
  }

  /** The caller's lines for one call: the persona's, at most `maxTurns`. */
  turns(persona: string, goal: string | undefined, maxTurns: number): TurnSource {
    const model = { asked: this.#caller.model, answered: null as string | null };
    return {
      maxTurns,
      mayStopEarly: true,
      model,
      next: async (view, signal) => {
        const line = await this.#line(personaMessages(persona, goal, view), model, signal);
        return line === undefined ? undefined : { say: line };
      },
    };
  }

  async #line(
    messages: ChatMessage[],
    model: { answered: string | null },
    signal: AbortSignal,
  ): Promise<string | undefined> {
    const answer = await this.#caller.text(messages, { signal });
    model.answered = answer.answered ?? model.answered;
    const content = answer.content.trim().replace(/^"(.*)"$/s, "$1");
    if (isStructured(content)) {
      throw new NotACallerLine(
        `the persona's model answered ${JSON.stringify(content.slice(0, 80))}, data rather than a caller's line (is it the judge's model?)`,
      );
    }
    if (content.toUpperCase() === DONE || content.toUpperCase().startsWith(`${DONE}.`)) return undefined;
    return content.slice(0, 2000);
  }

  async close(): Promise<void> {
    await Promise.all([this.#caller.close(), this.#variations.close()]);
  }
}
