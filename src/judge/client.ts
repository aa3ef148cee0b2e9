// The judge's HTTP client: `POST {baseUrl}/chat/completions` (the OpenAI Chat Completions protocol
// that OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp's server and LiteLLM serve) through the
// service client's one request core, as a read-only client: every request has a deadline and is
// retried on 429, 5xx and network errors with the core's bounded, jittered backoff; the key is
// removed from every error text.
import { z } from "zod";
import { type RequestCore as Core, RequestCore, type RetryNotice } from "../api/index.ts";
import { judgeMessages, VERDICT_JSON_SCHEMA } from "./prompt.ts";
import { JudgeAnswerError, parseVote, type Vote } from "./verdict.ts";

export type JudgeEndpoint = {
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

/** The first choice of a Chat Completions answer, as far as its readers need it, and the model the endpoint said answered. */
export type ChatChoice = z.output<typeof chatResponse>["choices"][number] & { answered_model: string | undefined };

/**
 * The one OpenAI-compatible Chat Completions client (the judge's, and the persona caller's model):
 * `POST {baseUrl}/chat/completions` through the request core, read-only, with a deadline per request.
 */
export class ChatClient {
  readonly model: string;
  readonly #core: Core;

  constructor(endpoint: JudgeEndpoint) {
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
  }

  get baseUrl(): string {
    return this.#core.baseUrl;
  }

  /** One completion: the messages (and any other request fields) sent, the first choice returned. */
  async complete(
    messages: readonly { role: string; content: string }[],
    options: { extra?: Record<string, unknown>; signal?: AbortSignal | undefined } = {},
  ): Promise<ChatChoice | undefined> {
    const response = await this.#core.request({
      method: "POST",
      path: "/chat/completions",
      body: { model: this.model, messages, ...options.extra },
      requestSchema: z.looseObject({ model: z.string().min(1) }),
      responseSchema: chatResponse,
      signal: options.signal,
    });
    const choice = response.choices[0];
    return choice && { ...choice, answered_model: response.model };
  }

  async close(): Promise<void> {
    await this.#core.close();
  }
}

/** The judge: one vote per request, its answer held to the verdict's shape. */
export class JudgeClient extends ChatClient {
  /** One vote: a request for a verdict on one rubric. Throws a JudgeAnswerError or the core's ApiError. */
  async vote(rubric: string, lines: readonly string[], signal?: AbortSignal): Promise<Vote> {
    const choice = await this.complete(judgeMessages(rubric, lines), {
      extra: {
        response_format: {
          type: "json_schema",
          json_schema: { name: "verdict", strict: true, schema: VERDICT_JSON_SCHEMA },
        },
      },
      signal,
    });
    const refusal = choice?.message.refusal;
    if (refusal) throw new JudgeAnswerError(`the judge refused: ${JSON.stringify(refusal.slice(0, 200))}`);
    if (choice?.finish_reason === "content_filter") {
      throw new JudgeAnswerError(
        "the judge's answer was withheld by its content filter (finish_reason content_filter)",
      );
    }
    const content = choice?.message.content;
    if (!content) throw new JudgeAnswerError("the judge's answer has no content");
    const vote = parseVote(content, lines.length);
    return choice.answered_model ? { ...vote, model: choice.answered_model } : vote;
  }
}
