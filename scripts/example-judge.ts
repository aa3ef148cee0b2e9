// An example judge for trying judged expectations without a model: a loopback server speaking the
// OpenAI Chat Completions protocol (`POST /v1/chat/completions`) that answers by a fixed rule, not
// by reading: a rubric passes when every phrase quoted in it ("…") appears in an agent line of the
// transcript, and the answer cites those lines. It checks the wiring (settings, votes, cited lines,
// reports, cache); point agents:judgeBaseUrl at a real model to judge meaning. Asked for a persona
// caller's next line, it plays one by rule too, from the persona and goal alone: it states the goal,
// asks once for help, then answers DONE.
//
//   npm run example-judge -- --port 8788     # then AGENT_IAC_JUDGE_BASE_URL=http://127.0.0.1:8788/v1
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { port: { type: "string", default: "8788" } } });

type Message = { role: string; content: string };

function answer(user: string): { verdict: "pass" | "fail"; reason: string; lines: number[] } {
  const rubric = /^Rubric: (.*)$/m.exec(user)?.[1] ?? "";
  // The check of a persona caller (caller.check): the example's own caller plays by rule, so it passes.
  if (rubric.startsWith("the caller (the lines marked caller:)")) {
    const lines = [...user.matchAll(/^(\d+): caller: /gm)].map((m) => Number(m[1]));
    if (lines.length > 0) return { verdict: "pass", reason: "the caller keeps to its goal (by rule)", lines };
    return { verdict: "fail", reason: "the caller said no line", lines: /^1: /m.test(user) ? [1] : [] };
  }
  const phrases = [...rubric.matchAll(/["“]([^"”]+)["”]/g)].map((m) => (m[1] ?? "").toLowerCase());
  const agentLines = [...user.matchAll(/^(\d+): agent: (.*)$/gm)].map((m) => ({
    n: Number(m[1]),
    text: (m[2] ?? "").toLowerCase(),
  }));
  // A verdict cites the lines it rests on: a failure, the agent's lines it read (else the first line).
  const read = agentLines.length > 0 ? agentLines.map((line) => line.n) : /^1: /m.test(user) ? [1] : [];
  if (phrases.length === 0) {
    return {
      verdict: "fail",
      reason: "the example judge checks only quoted phrases, and this rubric quotes none",
      lines: read,
    };
  }
  const found = phrases.map((phrase) => agentLines.find((line) => line.text.includes(phrase)));
  const missing = phrases.filter((_, i) => !found[i]);
  if (missing.length > 0) {
    return {
      verdict: "fail",
      reason: `the agent never says ${missing.map((p) => JSON.stringify(p)).join(", ")}`,
      lines: read,
    };
  }
  const lines = [...new Set(found.map((line) => line?.n as number))].sort((a, b) => a - b);
  return { verdict: "pass", reason: `the agent says ${phrases.map((p) => JSON.stringify(p)).join(", ")}`, lines };
}

/** The persona caller's next line: the goal, then one request for help, then DONE. */
function callerLine(system: string, user: string): string {
  const goal = /^The caller's goal: (.*)$/m.exec(system)?.[1]?.trim().replace(/\.$/, "");
  const said = (user.match(/^caller: /gm) ?? []).length;
  if (said === 0) return goal ? `Hello, I'm calling about ${goal}.` : "Hello, I have a question.";
  if (said === 1) return "Could you help me with that today, please?";
  return "DONE";
}

const server = createServer((request, response) => {
  let body = "";
  request.setEncoding("utf8");
  request.on("data", (chunk: string) => {
    body += chunk;
  });
  request.on("end", () => {
    if (request.method !== "POST" || request.url !== "/v1/chat/completions") {
      response.writeHead(404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `no route ${request.method} ${request.url}` } }));
      return;
    }
    let messages: Message[] = [];
    try {
      messages = (JSON.parse(body) as { messages?: Message[] }).messages ?? [];
    } catch {
      response.writeHead(400, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: "the body is not JSON" } }));
      return;
    }
    const user = messages.find((m) => m.role === "user")?.content ?? "";
    const system = messages.find((m) => m.role === "system")?.content ?? "";
    const content = system.startsWith("You play the caller") ? callerLine(system, user) : JSON.stringify(answer(user));
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        object: "chat.completion",
        model: "example-judge",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
      }),
    );
  });
});

// A busy port is the user's setup, not a crash: one line naming the port and the way out.
server.once("error", (error: NodeJS.ErrnoException) => {
  const reason =
    error.code === "EADDRINUSE" ? "is already in use" : `cannot be listened on (${error.code ?? error.message})`;
  process.stderr.write(`example judge: 127.0.0.1:${values.port} ${reason}; stop what serves it or pass --port N\n`);
  process.exit(2);
});
server.listen(Number(values.port), "127.0.0.1", () => {
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : values.port;
  process.stdout.write(`example judge listening on http://127.0.0.1:${port}/v1\n`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => server.close(() => process.exit(0)));
