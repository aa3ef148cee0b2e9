// The errors of a model endpoint (the judge's, the caller's, the drafts'): where a request to one
// came from, so that a refused key names that model's address and the setting that holds its key
// (never the service's agents:apiKey), and the one error of an answer that cannot be used.
import { AgentIacError, type AgentIacErrorOptions } from "./base.ts";

/** What a model request is for: each names its endpoint and the setting holding its key. */
export type ModelUse = "judge" | "caller" | "variations" | "drafts";

/** The model endpoint a request went to. */
export type ModelOrigin = {
  use: ModelUse;
  /** e.g. https://api.openai.com/v1 */
  baseUrl: string;
  model: string;
  /** The setting (and its environment variable) that holds the key, as a user sets it. */
  keySetting: string;
};

/** Each use's model as a message names it: "the judge refused: …". */
export const MODEL_USE_NAMES: Readonly<Record<ModelUse, string>> = {
  judge: "the judge",
  caller: "the persona model",
  variations: "the caller model",
  drafts: "the model",
};

/**
 * A model's answer cannot be used: refused, cut at its token limit (`finish_reason: length`),
 * withheld by its content filter, empty, or not of the shape asked for. One error for every model
 * request; `origin` says which model answered.
 */
export class ModelAnswerError extends AgentIacError {
  override name = "ModelAnswerError";
  readonly code = "AGENT_IAC_MODEL_ANSWER";
  readonly origin: ModelOrigin | undefined;
  constructor(message: string, origin?: ModelOrigin, options: Omit<AgentIacErrorOptions, "field" | "value"> = {}) {
    super(message, options);
    this.origin = origin;
  }
}
