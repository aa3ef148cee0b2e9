// An example judge for trying judged expectations without a model: a loopback server speaking the
// OpenAI Chat Completions protocol (`POST /v1/chat/completions`) that answers by a fixed rule, not
// by reading: a rubric passes when every phrase quoted in it ("…") appears in an agent line of the
// transcript, and the answer cites those lines. It checks the wiring (settings, votes, cited lines,
// reports, cache); point agents:judgeBaseUrl at a real model to judge meaning. Asked for a persona
// caller's next line, it plays one by rule too, from the persona and goal alone: it states the goal
// (a goal of steps, "A, then B", one step a line), asks once for help, then answers DONE. Asked to
// rephrase a scripted caller's turns (`caller.variations`), it says each line N ways by rule (the
// line, then with a spoken opening: "Hi, …", "Hello, …"), so the facts stay. Asked by
// `scenario derive` or `scenario generate` for scenarios, it writes them by rule from what the
// request lists (the tools called or the agent's tools, its languages, its persona's name).
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

/** The persona caller's next line: the goal's steps, then one request for help, then DONE. */
function callerLine(system: string, user: string): string {
  const goal = /^The caller's goal: (.*)$/m.exec(system)?.[1]?.trim().replace(/\.$/, "");
  const steps = goal ? goal.split(", then ") : [];
  const said = (user.match(/^caller: /gm) ?? []).length;
  if (said === 0) return steps[0] ? `Hello, I'm calling about ${steps[0]}.` : "Hello, I have a question.";
  if (said < steps.length) return `Also, ${steps[said]}, please.`;
  if (said === Math.max(1, steps.length)) return "Could you help me with that today, please?";
  return "DONE";
}

/** A "Label: a, b" line of a scenario request, as a list ("(none)" is empty). */
function listed(user: string, label: string): string[] {
  const value = new RegExp(`^${label}: (.*)$`, "m").exec(user)?.[1]?.trim() ?? "";
  return value === "" || value.startsWith("(") ? [] : value.split(", ");
}

const spoken = (tool: string) => tool.replaceAll("_", " ");

/**
 * `caller.variations`: each line N ways by rule (the line itself, then with a spoken opening), so
 * its facts and the words an agent listens for stay; one block per line, as the request asks.
 */
function rephrased(system: string, user: string): string {
  const n = Number(/Write each line (\d+) different ways/.exec(system)?.[1] ?? 1);
  const openings = ["", "Hi, ", "Hello, ", "Sorry, ", "Well, ", "So, "];
  const lines = [...user.matchAll(/^\d+\. (".*")$/gm)].map((m) => JSON.parse(m[1] as string) as string);
  return lines
    .map((line) =>
      Array.from({ length: n }, (_, i) => {
        const opening = openings[i % openings.length] as string;
        const body = opening ? `${line.charAt(0).toLowerCase()}${line.slice(1)}` : line;
        return `${opening}${body}${i >= openings.length ? ` (${Math.floor(i / openings.length) + 1})` : ""}`;
      }).join("\n"),
    )
    .join("\n\n");
}

/** `scenario derive`: the caller asked for what the call's tools did, in order; the rubrics quote the agent's confirmations. */
function derived(user: string) {
  const tools = listed(user, "Tools the agent called");
  return {
    scenarios: [
      {
        name: tools.length > 0 ? `asks-to-${spoken(tools.join(" and ")).replaceAll(" ", "-")}` : "asks-a-question",
        persona: "A caller like the one in the recorded call: brief and polite",
        goal: tools.length > 0 ? tools.map(spoken).join(", then ") : "an answer to a question",
        max_turns: 4,
        tool_calls: tools,
        procedures: {},
        judge: tools.map((tool) => `the agent confirms the request: "I have used ${tool}"`),
        language: null,
      },
    ],
  };
}

/** `scenario generate`: one scenario per tool, per language beyond the default, an off-topic caller and one who ends early. */
function generated(user: string) {
  const count = Number(/^Scenarios wanted: (\d+)$/m.exec(user)?.[1] ?? "5");
  const persona = listed(user, "Agent persona")[0];
  const greets = persona ? [`the agent introduces themself: "this is ${persona}"`] : [];
  const scenario = (name: string, who: string, goal: string, extra: Record<string, unknown> = {}) => ({
    name,
    persona: who,
    goal,
    max_turns: 3,
    tool_calls: [],
    procedures: {},
    judge: greets,
    language: null,
    ...extra,
  });
  const all = [
    ...listed(user, "Tools the agent has").map((tool) =>
      scenario(
        `asks-to-${spoken(tool).replaceAll(" ", "-")}`,
        `A caller who needs the agent to ${spoken(tool)}`,
        `${spoken(tool)} for next week`,
        {
          tool_calls: [tool],
        },
      ),
    ),
    ...listed(user, "Languages beyond the default").map((language) =>
      scenario(
        `speaks-${language.toLowerCase()}`,
        `A caller who speaks only ${language}`,
        "help in their own language",
        { language },
      ),
    ),
    scenario("off-topic", "An impatient caller who talks about the weather", "small talk about the weather"),
    scenario("ends-early", "A caller who hangs up right after the greeting", "nothing: they end the call at once", {
      max_turns: 1,
    }),
  ];
  return { scenarios: all.slice(0, count) };
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
    const content = system.startsWith("You play the caller")
      ? callerLine(system, user)
      : system.startsWith("You rephrase the lines a caller says")
        ? rephrased(system, user)
        : system.startsWith("You write one test scenario from a recorded call")
          ? JSON.stringify(derived(user))
          : system.startsWith("You propose test scenarios")
            ? JSON.stringify(generated(user))
            : JSON.stringify(answer(user));
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
