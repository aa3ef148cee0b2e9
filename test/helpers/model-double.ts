// A model endpoint double for the tests: a real HTTP server on port 0 speaking the OpenAI Chat
// Completions protocol (`POST /v1/chat/completions`), whose answers a test scripts per request:
// a line, a status (401, 500), an answer after a delay, or none at all (a hang). The model port's
// key check (src/model: one word asked with `max_tokens: 1`, before any call) is answered apart
// and recorded in `keyChecks`, so `requests` are the calls' own requests.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type ModelMessage = { role: string; content: string };
export type ModelBody = { model?: string; messages: ModelMessage[]; max_tokens?: number; [key: string]: unknown };

/** What the double answers: a text, an HTTP status, nothing ever (a hang), each optionally after `delayMs`. */
export type ModelReply = ({ content: string } | { status: number } | { hang: true }) & { delayMs?: number };

export type ModelDouble = {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  /** The calls' requests (not the key checks), as sent. */
  requests: ModelBody[];
  /** The key checks, with the Authorization header each carried. */
  keyChecks: { authorization: string | undefined }[];
  close(): Promise<void>;
};

/** The model port's key check: the smallest completion (max_tokens 1). */
export function isKeyCheck(body: object): boolean {
  return (body as { max_tokens?: unknown }).max_tokens === 1;
}

/** A completion whose message is `content`. */
export function completion(content: string, finish = "stop") {
  return {
    object: "chat.completion",
    model: "model-double",
    choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content } }],
  };
}

export async function startModelDouble(
  reply: (body: ModelBody, n: number) => ModelReply,
  options: { apiKey?: string } = {},
): Promise<ModelDouble> {
  const open = new Set<ServerResponse>();
  const double: ModelDouble = { url: "", requests: [], keyChecks: [], close: async () => {} };
  const server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const send = (status: number, value: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const body = JSON.parse(text) as ModelBody;
    const refused = options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`;
    if (isKeyCheck(body)) {
      double.keyChecks.push({ authorization: request.headers.authorization });
      return refused
        ? send(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } })
        : send(200, completion("OK", "length"));
    }
    double.requests.push(body);
    if (refused) return send(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
    const answer = reply(body, double.requests.length);
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    if ("hang" in answer) {
      open.add(response);
      return;
    }
    if ("status" in answer) return send(answer.status, { error: { message: `scripted ${answer.status}` } });
    send(200, completion(answer.content));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  double.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  double.close = async () => {
    for (const response of open) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return double;
}
