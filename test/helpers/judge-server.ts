// A small OpenAI-compatible judge for the tests: a real HTTP server on port 0 serving
// `POST /v1/chat/completions`, whose answers are scripted per rubric (matched by a substring of the
// rubric in the request): passing, failing, split votes, malformed JSON, a refusal, 429 then
// success, a stalled response, JSON inside prose. It records every request (headers and body), so
// tests can check what was sent and how often.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isKeyCheck } from "./model-double.ts";

export type JudgeAnswer =
  | { verdict: "pass" | "fail"; reason?: string; lines?: number[]; cite?: RegExp; inText?: boolean }
  | { malformed: string }
  | { refusal: string }
  | { status: number; retryAfter?: string }
  | { stall: true };

/**
 * Rubric substring → answers, used in turn (the last one repeats), or a function of the numbered
 * transcript the judge was sent and the model asked (to answer by what the conversation says).
 */
export type JudgeScript = Record<string, JudgeAnswer[] | ((transcript: string, model: string) => JudgeAnswer)>;

export type JudgeRequest = { authorization: string | undefined; body: Record<string, unknown>; rubric: string };

export type TestJudge = {
  /** The base URL, as OpenAI's is written: http://127.0.0.1:PORT/v1 */
  url: string;
  requests: JudgeRequest[];
  /** The model port's key checks (before any call), apart from the votes' requests. */
  keyChecks: { authorization: string | undefined }[];
  script: JudgeScript;
  /** The model the completions say answered (default "test-judge"): a test may change it between runs. */
  answeredModel?: string;
  close(): Promise<void>;
};

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    request.setEncoding("utf8");
    request.on("data", (chunk: string) => {
      text += chunk;
    });
    request.on("end", () => resolve(text));
    request.on("error", reject);
  });
}

const userText = (body: Record<string, unknown>) => {
  const messages = (body.messages ?? []) as { role: string; content: string }[];
  return messages.find((m) => m.role === "user")?.content ?? "";
};

/** The numbers of the transcript lines ("12: agent: …") whose text matches. */
function linesMatching(text: string, pattern: RegExp): number[] {
  return [...text.matchAll(/^(\d+): (.*)$/gm)].filter((m) => pattern.test(m[2] ?? "")).map((m) => Number(m[1]));
}

function completion(content: string | null, refusal: string | null = null, model = "test-judge") {
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    model,
    choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content, refusal } }],
  };
}

export async function startTestJudge(script: JudgeScript = {}, options: { apiKey?: string } = {}): Promise<TestJudge> {
  const requests: JudgeRequest[] = [];
  const used = new Map<string, number>();
  const stalled = new Set<ServerResponse>();
  const judge: TestJudge = { url: "", requests, keyChecks: [], script, close: async () => {} };
  const server = createServer(async (request, response) => {
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(JSON.stringify(value));
    };
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
      return send(404, { error: { message: `no route ${request.method} ${request.url}` } });
    }
    const body = JSON.parse(await readBody(request)) as Record<string, unknown>;
    const refused = options.apiKey !== undefined && request.headers.authorization !== `Bearer ${options.apiKey}`;
    if (isKeyCheck(body)) {
      judge.keyChecks.push({ authorization: request.headers.authorization });
      if (refused)
        return send(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      return send(200, completion("OK"));
    }
    const text = userText(body);
    const rubric = /^Rubric: (.*)$/m.exec(text)?.[1] ?? "";
    requests.push({ authorization: request.headers.authorization, body, rubric });
    if (options.apiKey && request.headers.authorization !== `Bearer ${options.apiKey}`) {
      return send(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
    }
    const key = Object.keys(judge.script).find((k) => rubric.includes(k));
    if (key === undefined) return send(400, { error: { message: `no scripted answer for rubric ${rubric}` } });
    const scripted = judge.script[key] as JudgeScript[string];
    const n = used.get(key) ?? 0;
    used.set(key, n + 1);
    const answer =
      typeof scripted === "function"
        ? scripted(text, String(body.model))
        : (scripted[Math.min(n, scripted.length - 1)] as JudgeAnswer);
    if ("stall" in answer) {
      stalled.add(response);
      return;
    }
    if ("status" in answer) {
      return send(
        answer.status,
        { error: { message: "Rate limit reached", type: "requests" } },
        answer.retryAfter ? { "retry-after": answer.retryAfter } : {},
      );
    }
    if ("malformed" in answer) return send(200, completion(answer.malformed, null, judge.answeredModel));
    if ("refusal" in answer) return send(200, completion(null, answer.refusal, judge.answeredModel));
    const lines = answer.cite ? linesMatching(text, answer.cite) : (answer.lines ?? [1]);
    const verdict = { verdict: answer.verdict, reason: answer.reason ?? `scripted ${answer.verdict}`, lines };
    const content = answer.inText
      ? `Here is my assessment.\n\`\`\`json\n${JSON.stringify(verdict)}\n\`\`\`\nThanks.`
      : JSON.stringify(verdict);
    send(200, completion(content, null, judge.answeredModel));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  judge.url = `http://127.0.0.1:${port}/v1`;
  judge.close = async () => {
    for (const response of stalled) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return judge;
}

/** The environment of a run judged by `judge`: its address, the model asked and the judge cache's signing key. */
export function judgeEnv(judge: TestJudge, model: string, cacheKey: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    AGENT_IAC_JUDGE_BASE_URL: judge.url,
    AGENT_IAC_JUDGE_MODEL: model,
    AGENT_IAC_JUDGE_CACHE_KEY: cacheKey,
  };
}
