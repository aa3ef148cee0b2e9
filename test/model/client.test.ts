// The model port against a real HTTP server on port 0: every way an answer cannot be used is the one
// ModelAnswerError naming its model; a refused key is an AuthenticationError whose origin names the
// model and its key setting; the key check sends the smallest request and throws only for a refusal.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AuthenticationError, ModelAnswerError } from "../../src/errors/index.ts";
import { ModelClient, responseFormat } from "../../src/model/index.ts";

type Scripted = { status?: number; body?: unknown };
let next: Scripted = {};
const bodies: Record<string, unknown>[] = [];
let url = "";
const server = createServer(async (request, response) => {
  let text = "";
  for await (const chunk of request) text += chunk;
  bodies.push(JSON.parse(text) as Record<string, unknown>);
  response.writeHead(next.status ?? 200, { "content-type": "application/json" });
  response.end(JSON.stringify(next.body ?? {}));
});

const choice = (message: Record<string, unknown>, finish_reason = "stop") => ({
  model: "answered-model",
  choices: [{ index: 0, finish_reason, message: { role: "assistant", ...message } }],
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const client = (use: "judge" | "caller" = "judge") =>
  new ModelClient(use, {
    baseUrl: url,
    model: "m-2026-01-01",
    apiKey: "sk-model-test-4242",
    timeoutSec: 5,
    maxRetries: 0,
  });

const SHAPE = { name: "answer", schema: z.object({ verdict: z.enum(["pass", "fail"]) }) };

describe("the model port", () => {
  it.each([
    [{ content: null, refusal: "I can't" }, "stop", /the judge refused: "I can't"/],
    [{ content: "cut" }, "length", /cut at its token limit \(finish_reason length\)/],
    [{ content: "" }, "content_filter", /withheld by its content filter/],
    [{ content: "  " }, "stop", /has no content/],
  ])("an answer that cannot be used is one ModelAnswerError naming its model: %j %s", async (message, finish, why) => {
    next = { body: choice(message, finish) };
    const model = client();
    const error = await model.text([{ role: "user", content: "hi" }]).catch((e: unknown) => e);
    await model.close();
    expect(error).toBeInstanceOf(ModelAnswerError);
    expect((error as ModelAnswerError).code).toBe("AGENT_IAC_MODEL_ANSWER");
    expect((error as Error).message).toMatch(why);
    expect((error as ModelAnswerError).origin).toMatchObject({ use: "judge", model: "m-2026-01-01" });
  });

  it("asks for a shape with a strict JSON Schema made from the zod schema, and reads JSON in prose; a wrong shape is the same error", async () => {
    next = { body: choice({ content: 'Sure.\n```json\n{"verdict": "pass"}\n```' }) };
    const model = client();
    const answer = await model.text([{ role: "user", content: "hi" }], { format: SHAPE });
    expect(model.read(answer.content, SHAPE).value).toEqual({ verdict: "pass" });
    expect(bodies.at(-1)?.response_format).toEqual(responseFormat(SHAPE));
    expect(responseFormat(SHAPE)).toMatchObject({
      type: "json_schema",
      json_schema: { name: "answer", strict: true, schema: { additionalProperties: false, required: ["verdict"] } },
    });
    expect(() => model.read('{"verdict": "maybe"}', SHAPE)).toThrow(ModelAnswerError);
    await model.close();
  });

  it("a refused key is an AuthenticationError whose origin names the model, its address and its key setting", async () => {
    next = { status: 401, body: { error: { message: "Incorrect API key provided" } } };
    const model = client("caller");
    const error = await model.text([{ role: "user", content: "hi" }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).origin).toEqual({
      use: "caller",
      baseUrl: url,
      model: "m-2026-01-01",
      keySetting: expect.stringContaining("agents:callerApiKey"),
    });
    expect((error as Error).message).not.toContain("sk-model-test-4242");
    // The key check: one word, max_tokens 1; it throws for the refusal only.
    await expect(model.checkKey()).rejects.toBeInstanceOf(AuthenticationError);
    expect(bodies.at(-1)).toMatchObject({ model: "m-2026-01-01", max_tokens: 1 });
    next = { status: 400, body: { error: { message: "max_tokens is not supported with this model" } } };
    await expect(model.checkKey()).resolves.toBeUndefined();
    await model.close();
  });
});
