// The one model client: `POST {baseUrl}/chat/completions`, the OpenAI Chat Completions protocol
// (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server, LiteLLM), for every model agent-iac asks:
// the judge, the persona caller, the rephrasings of `caller.variations`, `scenario derive`/`generate`.
// Requests go through the service client's request core, read-only: a deadline per request, retries
// on 429, 5xx and network errors with its bounded, jittered backoff, the key removed from every
// error text. Every error says which model it came from (ApiError.origin, ModelAnswerError.origin),
// so a refused key names that model and the setting holding its key, never the service's.
import { z } from "zod";
import {
  ApiError,
  AuthenticationError,
  type RequestCore as Core,
  RequestCore,
  type RetryNotice,
} from "../api/index.ts";
import { MODEL_USE_NAMES, ModelAnswerError, type ModelOrigin, type ModelUse } from "../errors/index.ts";
import { JUDGE_KEYS, PERSONA_KEYS } from "../settings/index.ts";
import { jsonIn } from "./json.ts";

/** One message of a conversation with a model. */
export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type ModelEndpoint = {
  /** e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1 */
  baseUrl: string;
  model: string;
  apiKey?: string | undefined;
  /** One request's deadline (headers and the whole body), seconds. */
  timeoutSec: number;
  /** Retries after the first attempt (default 3). */
  maxRetries?: number;
  retryBaseDelayMs?: number;
  onRetry?: ((notice: RetryNotice) => void) | undefined;
};

/** The setting that holds each use's key, as a message names it. */
const KEY_SETTINGS: Readonly<Record<ModelUse, string>> = {
  judge: `${JUDGE_KEYS.apiKey.config} (or ${JUDGE_KEYS.apiKey.env})`,
  caller: `${PERSONA_KEYS.apiKey.config} (or ${PERSONA_KEYS.apiKey.env}; unset, the judge's ${JUDGE_KEYS.apiKey.config})`,
  variations: `${PERSONA_KEYS.apiKey.config} (or ${PERSONA_KEYS.apiKey.env}; unset, the judge's ${JUDGE_KEYS.apiKey.config})`,
  drafts: `${PERSONA_KEYS.apiKey.config} (or ${PERSONA_KEYS.apiKey.env}; unset, the judge's ${JUDGE_KEYS.apiKey.config})`,
};

const chatResponse = z.looseObject({
  /** The model that answered, as the endpoint names it (it may differ from the one asked). */
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        finish_reason: z.string().nullable().optional(),
        message: z.looseObject({
          content: z.string().nullable().optional(),
          refusal: z.string().nullable().optional(),
        }),
      }),
    )
    .min(1),
});

/** A model's usable answer: its text, and the model its endpoint said answered. */
export type Answer = { content: string; answered: string | undefined };

/** A structured answer asked for: its name in the request and its zod schema (the request's JSON Schema is made from it). */
export type AnswerShape<T> = { name: string; schema: z.ZodType<T> };

/** The request's `response_format` for a shape: a strict JSON Schema made from the zod schema. */
export function responseFormat(shape: AnswerShape<unknown>): Record<string, unknown> {
  const { $schema: _, ...schema } = z.toJSONSchema(shape.schema) as Record<string, unknown>;
  return { type: "json_schema", json_schema: { name: shape.name, strict: true, schema } };
}

const MAX_SHOWN = 200;
const excerpt = (text: string) => JSON.stringify(text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text);

/**
 * A model's text read as a shape: the JSON in it (JSON-in-text tolerated, see json.ts), checked by
 * the schema; no JSON, or JSON of another shape, is a ModelAnswerError.
 */
export function readShape<T>(
  content: string,
  shape: AnswerShape<T>,
  origin?: ModelOrigin,
): { value: T; around: string } {
  const who = origin ? MODEL_USE_NAMES[origin.use] : "the model";
  const found = jsonIn(content);
  if (!found) throw new ModelAnswerError(`${who}'s answer is not JSON: ${excerpt(content)}`, origin);
  const parsed = shape.schema.safeParse(found.value);
  if (!parsed.success) {
    throw new ModelAnswerError(
      `${who}'s answer does not have the ${shape.name} shape: ${z.prettifyError(parsed.error).replace(/\n/g, " ")}`.slice(
        0,
        MAX_SHOWN * 2,
      ),
      origin,
    );
  }
  return { value: parsed.data, around: found.around };
}

export class ModelClient {
  readonly model: string;
  readonly origin: ModelOrigin;
  readonly #core: Core;
  /** Ends the requests still in flight when the client closes (a rephrasing no call waits for any more). */
  readonly #closing = new AbortController();

  constructor(use: ModelUse, endpoint: ModelEndpoint) {
    this.model = endpoint.model;
    const ms = Math.round(endpoint.timeoutSec * 1000);
    this.#core = new RequestCore({
      baseUrl: endpoint.baseUrl,
      apiKey: endpoint.apiKey,
      readOnly: true,
      maxRetries: endpoint.maxRetries ?? 3,
      ...(endpoint.retryBaseDelayMs === undefined ? {} : { retryBaseDelayMs: endpoint.retryBaseDelayMs }),
      // The whole-response deadline comes first, so a stalled model is one error, not four waits.
      timeouts: { requestMs: ms, headersMs: ms + 1000, bodyMs: ms + 1000 },
      onRetry: endpoint.onRetry,
    });
    this.origin = { use, baseUrl: this.#core.baseUrl, model: endpoint.model, keySetting: KEY_SETTINGS[use] };
  }

  get baseUrl(): string {
    return this.#core.baseUrl;
  }

  /**
   * One completion's text. A refusal, an answer cut at its token limit, one withheld by a content
   * filter or one with no text is a ModelAnswerError; a failed request the core's ApiError, with
   * this model as its origin.
   */
  async text(
    messages: readonly ChatMessage[],
    options: { signal?: AbortSignal | undefined; format?: AnswerShape<unknown> } = {},
  ): Promise<Answer> {
    const response = await this.#send(
      { messages, ...(options.format ? { response_format: responseFormat(options.format) } : {}) },
      options.signal,
    );
    const choice = response.choices[0];
    const who = MODEL_USE_NAMES[this.origin.use];
    const refusal = choice?.message.refusal;
    if (refusal) throw this.#wrong(`${who} refused: ${excerpt(refusal)}`);
    if (choice?.finish_reason === "content_filter") {
      throw this.#wrong(`${who}'s answer was withheld by its content filter (finish_reason content_filter)`);
    }
    if (choice?.finish_reason === "length") {
      throw this.#wrong(`${who}'s answer was cut at its token limit (finish_reason length)`);
    }
    const content = choice?.message.content;
    if (!content?.trim()) throw this.#wrong(`${who}'s answer has no content`);
    return { content, answered: response.model };
  }

  /** A text read as the shape (readShape), with this model as the origin of its error. */
  read<T>(content: string, shape: AnswerShape<T>): { value: T; around: string } {
    return readShape(content, shape, this.origin);
  }

  /**
   * Whether the endpoint takes the key, before anything depends on it: the smallest request the
   * protocol has (one user word, `max_tokens: 1`; the protocol has no request that costs nothing).
   * A refused key (401/403) throws, naming this model; any other answer (a 400 for the parameter,
   * a 5xx) leaves the calls to tell.
   */
  async checkKey(signal?: AbortSignal): Promise<void> {
    try {
      await this.#send({ messages: [{ role: "user", content: "Say OK." }], max_tokens: 1 }, signal);
    } catch (error) {
      if (error instanceof AuthenticationError) throw error;
      if (signal?.aborted) throw error;
    }
  }

  async #send(body: Record<string, unknown>, signal: AbortSignal | undefined) {
    try {
      return await this.#core.request({
        method: "POST",
        path: "/chat/completions",
        body: { model: this.model, ...body },
        requestSchema: z.looseObject({ model: z.string().min(1) }),
        responseSchema: chatResponse,
        signal: signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal,
      });
    } catch (error) {
      if (error instanceof ApiError) error.origin ??= this.origin;
      throw error;
    }
  }

  #wrong(message: string): ModelAnswerError {
    return new ModelAnswerError(message, this.origin);
  }

  async close(): Promise<void> {
    this.#closing.abort();
    await this.#core.close();
  }
}
