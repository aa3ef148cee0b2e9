// scripts/example-judge.ts as a user starts it: on a port something else holds (the developer's own
// example judge on its documented 8788, say) it says so in one line and exits 2, no stack trace.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PersonaModel } from "../../src/caller/index.ts";
import { projectRoot } from "../../src/workspace/index.ts";

const SCRIPT = path.join(projectRoot, "scripts", "example-judge.ts");

function run(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [SCRIPT, ...args], { timeout: 30_000 }, (error, _stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? -1) : 0, stderr }),
    );
  });
}

describe("the example judge on a busy port", () => {
  const holder = net.createServer();
  let port = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    port = (holder.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it("exits 2 with one line naming the port and the way out", async () => {
    const { code, stderr } = await run(["--port", String(port)]);
    expect(code).toBe(2);
    expect(stderr).toBe(`example judge: 127.0.0.1:${port} is already in use; stop what serves it or pass --port N\n`);
  });
});

describe("the example judge playing a persona caller", () => {
  let child: ChildProcess;
  let url = "";
  beforeAll(async () => {
    child = spawn(process.execPath, [SCRIPT, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
    url = await new Promise<string>((resolve) => {
      let out = "";
      child.stdout?.on("data", (chunk) => {
        out += chunk;
        const match = /listening on (\S+)/.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
    });
  });
  afterAll(() => {
    child.kill();
  });

  it("answers the persona's prompt with the goal, one request for help, then DONE", async () => {
    const model = new PersonaModel({ baseUrl: url, model: "example-judge", timeoutSec: 5 });
    const source = model.turns("A customer whose router keeps dropping", "a technician visit", 5);
    const signal = new AbortController().signal;
    const first = await source.next({ transcript: ["agent: Hello, this is Maya."], said: 0 }, signal);
    expect(first).toEqual({ say: "Hello, I'm calling about a technician visit." });
    const heard = ["agent: Hello, this is Maya.", `caller: ${first?.say}`, "agent: Sure."];
    expect(await source.next({ transcript: heard, said: 1 }, signal)).toEqual({
      say: "Could you help me with that today, please?",
    });
    const both = [...heard, "caller: Could you help me with that today, please?", "agent: Done."];
    expect(await source.next({ transcript: both, said: 2 }, signal)).toBeUndefined();
    await model.close();
  });

  it("rephrases a scripted caller's turns by rule: N plain lines a turn, the facts kept (caller.variations)", async () => {
    const model = new PersonaModel({ baseUrl: url, model: "example-judge", timeoutSec: 5 });
    const turns = [
      "Can you check availability for a cleaning on Tuesday morning?",
      "Great, please book appointment for Tuesday at 10am.",
    ];
    // Parsed by the caller's own reader (parseRephrasings), which refuses data, wrong counts and empty lines.
    const { lines } = await model.rephrase(turns, 3, new AbortController().signal);
    expect(lines).toEqual([
      [
        "Can you check availability for a cleaning on Tuesday morning?",
        "Hi, can you check availability for a cleaning on Tuesday morning?",
        "Hello, can you check availability for a cleaning on Tuesday morning?",
      ],
      [
        "Great, please book appointment for Tuesday at 10am.",
        "Hi, great, please book appointment for Tuesday at 10am.",
        "Hello, great, please book appointment for Tuesday at 10am.",
      ],
    ]);
    await model.close();
  });
});
