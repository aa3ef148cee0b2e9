// The persona call's record of its model (issue 51): the model asked, and the one the endpoint
// says answered (its responses' `model`), in the JSON report's call and, when they differ, on the
// call's terminal line. The simulator and a scripted Chat Completions server, both on port 0.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerShape, PersonaModel } from "../../src/caller/index.ts";
import type { SmokeScenario } from "../../src/definitions/index.ts";
import { smokeScenario } from "../../src/definitions/schema.ts";
import { callLines } from "../../src/render/index.ts";
import { runSmoke } from "../../src/smoke/index.ts";
import { type ExampleService, exampleService } from "../helpers/simulator.ts";

/** A persona model that asks once, then is done, answering as `answeredAs`. */
async function modelServer(answeredAs: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (request, response) => {
    let text = "";
    for await (const chunk of request) text += chunk;
    const transcript = (JSON.parse(text) as { messages: { content: string }[] }).messages.at(-1)?.content ?? "";
    const line = transcript.includes("caller:") ? "DONE" : "Could you check availability for Tuesday?";
    response.setHeader("content-type", "application/json");
    response.end(
      JSON.stringify({
        model: answeredAs,
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: line } }],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("a persona call records its model", () => {
  let service: ExampleService;
  let model: Awaited<ReturnType<typeof modelServer>>;
  beforeAll(async () => {
    service = await exampleService({ eventDelayMs: 1 });
    model = await modelServer("persona-model-2024-11-20");
  });
  afterAll(async () => {
    await model?.close();
    await service?.close();
  });

  it("the model asked and the one that answered are in the call's record; a different one is shown", async () => {
    const scenario = smokeScenario.parse({
      name: "persona-model",
      channel: { callee_no: "+15550142100" },
      transport: "ws",
      caller: { persona: "A customer", goal: "a Tuesday appointment", max_turns: 3 },
      expect: { says: ["this is"] },
    }) as SmokeScenario;
    const definitions = service.agents.map((a) => (a.key === "booking" ? { ...a, smoke: [scenario] } : a));
    const persona = new PersonaModel({ baseUrl: model.url, model: "persona-model", timeoutSec: 5 });
    const { report } = await runSmoke({
      definitions,
      held: service.held,
      selection: { agents: ["booking"], scenarios: ["persona-model"] },
      connection: { baseUrl: service.sim.url, apiKey: service.sim.apiKey },
      concurrency: 1,
      out: { write: () => true, isTTY: false },
      caller: {
        callerShape: callerShape({ message: undefined, end: undefined }, service.sim.url),
        persona: () => persona.turns("A customer", "a Tuesday appointment", 3),
      },
    });
    await persona.close();
    const call = report.results[0];
    expect(call?.caller_model).toEqual({ asked: "persona-model", answered: "persona-model-2024-11-20" });
    expect(callLines(call as NonNullable<typeof call>)).toContain(
      "the caller's model answered as persona-model-2024-11-20, not persona-model",
    );
  });
});
