// The model of `scenario derive` / `scenario generate` tests: the repository's example judge
// (scripts/example-judge.ts, spawned on port 0 as a user starts it) behind a real HTTP server on port
// 0 that records every request it is sent and, where a test scripts one, answers a derive or
// generate request itself (a hostile answer, a scenario that fails); everything else (the persona
// caller's lines, the judge's votes) the example judge answers.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { projectRoot } from "../../src/workspace/index.ts";
import { isKeyCheck } from "./model-double.ts";

type Message = { role: string; content: string };
export type DraftKind = "derive" | "generate";

export type DraftModel = {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  /** Every request body, as sent. */
  requests: string[];
  /** A scripted answer (the message content) to the derive or generate requests, or one that never comes; none: the example judge's. */
  answer: Partial<Record<DraftKind, (user: string) => string | Promise<string>>>;
  close(): Promise<void>;
};

function kindOf(messages: Message[]): DraftKind | undefined {
  const system = messages.find((m) => m.role === "system")?.content ?? "";
  if (system.startsWith("You write one test scenario")) return "derive";
  if (system.startsWith("You propose test scenarios")) return "generate";
  return undefined;
}

async function exampleJudge(): Promise<{ child: ChildProcess; url: string }> {
  const script = path.join(projectRoot, "scripts", "example-judge.ts");
  const child = spawn(process.execPath, [script, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.once("exit", (code) => reject(new Error(`the example judge exited ${code}`)));
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
  });
  return { child, url };
}

export async function startDraftModel(): Promise<DraftModel> {
  const example = await exampleJudge();
  const model: DraftModel = { url: "", requests: [], answer: {}, close: async () => {} };
  const server = createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    const parsed = JSON.parse(body) as { messages: Message[]; max_tokens?: number };
    // The model port's key check (before any call) is not one of the requests a test counts.
    if (!isKeyCheck(parsed)) model.requests.push(body);
    const messages = parsed.messages;
    const kind = kindOf(messages);
    const scripted = kind && model.answer[kind];
    if (scripted) {
      const user = messages.find((m) => m.role === "user")?.content ?? "";
      const content = await scripted(user);
      response.writeHead(200, { "content-type": "application/json" });
      response.end(
        JSON.stringify({
          object: "chat.completion",
          model: "stand-in",
          choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
        }),
      );
      return;
    }
    const forwarded = await fetch(`${example.url}/chat/completions`, { method: "POST", body });
    response.writeHead(forwarded.status, { "content-type": "application/json" });
    response.end(await forwarded.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  model.close = async () => {
    example.child.removeAllListeners("exit");
    example.child.kill();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return model;
}
