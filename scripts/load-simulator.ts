// `node scripts/load-simulator.ts`: a load check of the local simulator (not a test). It starts
// `agent-iac service --port 0` as a separate process on 127.0.0.1, then
//   1. sends a mix of list and create requests from CONCURRENCY workers for at most DURATION_MS
//      (and at most MAX_REQUESTS requests), and reports requests per second;
//   2. places STREAMS conversations that wait for the user, opens one SSE stream per conversation
//      and reports how many streams are held open at the same time.
// Bounded in count and time, loopback only. The API key goes to the server in its environment.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createParser } from "eventsource-parser";
import { Agent, request } from "undici";

const DURATION_MS = 5_000;
const MAX_REQUESTS = 20_000;
const CONCURRENCY = 32;
const STREAMS = 200;
const STREAM_WAIT_MS = 20_000;

const key = `sk-load-${randomBytes(12).toString("hex")}`;
const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000 });
const headers = { authorization: `Bearer ${key}`, "service-version": "2025-06-19", "content-type": "application/json" };

async function startService(): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, ["src/cli.ts", "service", "--port", "0", "--event-delay-ms", "20"], {
    cwd: new URL("..", import.meta.url).pathname,
    env: { ...process.env, AGENT_IAC_API_KEY: key },
    stdio: ["ignore", "pipe", "ignore"], // stderr carries the request log
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("the service did not start in 15 s")), 15_000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once("exit", () => reject(new Error(`the service exited: ${out}`)));
  });
  return {
    url,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

async function send(
  url: string,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, string> }> {
  const response = await request(`${url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher,
  });
  const text = await response.body.text();
  return { status: response.statusCode, json: text ? JSON.parse(text) : undefined };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function requestRate(url: string) {
  const pa = (await send(url, "POST", "/procedural_agents", { name: "Load summary", description: "d", config: {} }))
    .json;
  const ca = (
    await send(url, "POST", "/conversational_agents", {
      name: "Load agent",
      description: "d",
      config: { personas: [{ name: "Ada" }] },
      postprocess_agents: [pa.id],
    })
  ).json;
  const service = (await send(url, "GET", "/_simulator/info")).json.service_id as string;
  const mix: (() => Promise<{ status: number }>)[] = [
    () => send(url, "GET", "/conversations"),
    () => send(url, "GET", "/procedures"),
    () => send(url, "GET", `/feedbacks?service_id=${service}`),
    () => send(url, "POST", "/procedural_agents", { name: "Load", description: "d", config: {} }),
  ];
  const latencies: number[] = [];
  let errors = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + DURATION_MS;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      for (let i = worker; performance.now() < deadline && issued < MAX_REQUESTS; i++) {
        issued++;
        const t = performance.now();
        const { status } = await (mix[i % mix.length] as () => Promise<{ status: number }>)();
        latencies.push(performance.now() - t);
        if (status !== 200) errors++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    ca: ca.id as string,
    count: latencies.length,
    seconds,
    errors,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

async function streamsHeld(url: string, agentId: string) {
  const conversations: string[] = [];
  for (let i = 0; i < STREAMS; i++) {
    const created = await send(url, "POST", "/conversations", {
      agent_id: agentId,
      channel: { type: "phone", callee_no: "+15550100100" },
      livemode: false,
      context: { simulation: { wait_for_user: true, user_turns: [] } },
    });
    conversations.push(created.json.id as string);
  }
  const controller = new AbortController();
  let open = 0;
  let greeted = 0;
  let ended = 0;
  const started = performance.now();
  const allGreeted = new Promise<void>((resolve) => {
    const check = () => greeted === STREAMS && resolve();
    for (const id of conversations) {
      (async () => {
        const response = await request(`${url}/conversations/${id}/events`, {
          method: "GET",
          headers: { authorization: headers.authorization, "service-version": headers["service-version"] },
          dispatcher,
          signal: controller.signal,
          bodyTimeout: 0,
        });
        if (response.statusCode !== 200) return;
        open++;
        let counted = false;
        const parser = createParser({
          onEvent: (message) => {
            const type = JSON.parse(message.data).payload.type;
            if (type === "agent.message.completed" && !counted) {
              counted = true;
              greeted++;
              check();
            }
            if (type === "conversation.ended") ended++;
          },
        });
        for await (const chunk of response.body) parser.feed(chunk.toString("utf8"));
      })().catch(() => {});
    }
  });
  const timedOut = await Promise.race([
    allGreeted.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(true), STREAM_WAIT_MS)),
  ]);
  const seconds = (performance.now() - started) / 1000;
  // Still open a moment later: nothing ended.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const held = open - ended;
  controller.abort();
  return { held, greeted, seconds, timedOut };
}

async function main() {
  const service = await startService();
  try {
    const rate = await requestRate(service.url);
    process.stdout.write(
      `requests: ${rate.count} in ${rate.seconds.toFixed(1)} s from ${CONCURRENCY} workers → ${Math.round(rate.count / rate.seconds)} req/s ` +
        `(p50 ${rate.p50.toFixed(1)} ms, p99 ${rate.p99.toFixed(1)} ms, ${rate.errors} non-200)\n`,
    );
    const streams = await streamsHeld(service.url, rate.ca);
    process.stdout.write(
      `SSE streams: ${streams.held} of ${STREAMS} held open concurrently; ${streams.greeted} received their greeting within ${streams.seconds.toFixed(1)} s${streams.timedOut ? " (timed out)" : ""}\n`,
    );
  } finally {
    const code = await service.stop();
    process.stdout.write(`service stopped (exit ${code})\n`);
    await dispatcher.close();
  }
}

await main();
