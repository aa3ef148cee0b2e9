// The caller's cost (issue 39): "a caller adds at most one round trip per turn over the service's
// own response time". The simulator runs behind a TCP proxy that delays every chunk by a fixed
// one-way time in each direction (a network the caller's lines and the agent's words both cross),
// and answers each line after `response_delay_ms`. Per caller turn:
//   caller    = the agent's first word received here − the line sent (what the caller waited; the
//               response latency smoke reports with a caller),
//   service   = the agent's first message event − its user.message.received (the events' created_at:
//               the service's own response time),
//   overhead  = caller − service,
// against one round trip: a small request through the same proxy, timed here (median of several).
// A line must reach the service and the word come back, so one round trip is also the least a caller
// can add: the figure is median overhead ÷ median round trip, and the bound holds at ≤ 1.1 (10 % for
// the timers' and the shared machine's noise: the simulator also takes a timer tick to show a line
// heard, which its own timestamps leave out). How many turns stayed within one round trip is printed too.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { request } from "undici";
import { createClient } from "../src/api/index.ts";
import { callerShape } from "../src/caller/index.ts";
import { loadAgents } from "../src/definitions/index.ts";
import type { CallResult } from "../src/results/index.ts";
import { startSimulator } from "../src/simulator/index.ts";
import { runSmoke } from "../src/smoke/index.ts";
import { createAgents } from "../test/helpers/simulator.ts";

export type CallerBenchOptions = {
  /** Delay added to every chunk in each direction (a round trip is twice this, plus the service's handling). */
  oneWayMs: number;
  /** The simulated agent's own response time (`context.simulation.response_delay_ms`). */
  responseDelayMs: number;
  /** Calls placed one after another, each with TURNS caller lines. */
  calls: number;
  log?: (line: string) => void;
};

export type CallerBenchResult = {
  oneWayMs: number;
  responseDelayMs: number;
  calls: number;
  turns: number;
  roundTripMs: { median: number; p95: number };
  callerMs: { median: number; p95: number };
  serviceMs: { median: number; p95: number };
  overheadMs: { median: number; p95: number; max: number };
  /** Turns whose overhead was at most the median round trip. */
  turnsWithinRoundTrip: number;
  /** Median overhead ÷ median round trip. */
  ratio: number;
  holds: boolean;
};

const TURNS = [
  "Hello, I'd like to ask about an appointment.",
  "Can you check availability on Tuesday morning?",
  "And on Wednesday afternoon?",
  "Thanks, that is all.",
];
const ROUND_TRIPS = 30;
/** The bound: median overhead ÷ median round trip. */
const MAX_RATIO = 1.1;

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const stats = (values: readonly number[]) => ({
  median: Math.round(quantile(values, 0.5)),
  p95: Math.round(quantile(values, 0.95)),
});

/** A TCP proxy on a free loopback port that delays every chunk by `oneWayMs`, in order, both ways. */
async function delayProxy(target: URL, oneWayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const relay = (from: net.Socket, to: net.Socket) => {
    sockets.add(from);
    from.on("data", (chunk) => setTimeout(() => to.destroyed || to.write(chunk), oneWayMs));
    from.on("end", () => setTimeout(() => to.end(), oneWayMs));
    from.on("error", () => to.destroy());
    from.on("close", () => sockets.delete(from));
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Per caller turn of a call: what the caller waited and the service's own response time. */
function turnTimes(call: CallResult, lines: readonly { sentAt: number; firstWordAt?: number }[]) {
  const entries = call.entries;
  const service = entries.flatMap((entry, i) => {
    if (entry.kind !== "user" || entry.at_ms === null) return [];
    const reply = entries.slice(i + 1).find((e) => e.kind === "agent");
    return reply?.at_ms === null || reply?.at_ms === undefined ? [] : [reply.at_ms - entry.at_ms];
  });
  const caller = lines.flatMap((line) => (line.firstWordAt === undefined ? [] : [line.firstWordAt - line.sentAt]));
  if (service.length !== caller.length) {
    throw new Error(`${call.scenario}: ${caller.length} caller turn(s) answered, ${service.length} in the events`);
  }
  return caller.map((ms, i) => ({ caller: ms, service: service[i] as number }));
}

export async function callerBench(options: CallerBenchOptions): Promise<CallerBenchResult> {
  const log = options.log ?? (() => {});
  const sim = await startSimulator({ port: 0, eventDelayMs: 1, quiet: true });
  const proxy = await delayProxy(new URL(sim.url), options.oneWayMs);
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-caller-"));
  const client = createClient({ baseUrl: proxy.url, apiKey: sim.apiKey });
  try {
    await writeFile(
      path.join(dir, "desk.yaml"),
      [
        "kind: conversational",
        "name: Desk",
        "description: The caller benchmark's agent.",
        "config:",
        "  personas: [{ name: Leo }]",
        "  tool: { tools: [{ ns: syscall, name: check_availability }] }",
        "smoke:",
        "  - name: caller-turns",
        '    channel: { callee_no: "+15550100100" }',
        "    transport: ws",
        `    iterations: ${options.calls}`,
        "    timeout: 60",
        `    context: { simulation: { response_delay_ms: ${options.responseDelayMs} } }`,
        "    caller:",
        `      turns: ${JSON.stringify(TURNS)}`,
        "    expect: { tool_calls: [check_availability] }",
      ].join("\n"),
    );
    const { agents, errors } = await loadAgents(dir, { from: process.cwd() });
    if (errors.length > 0) throw new Error(`the benchmark's agent file is invalid: ${JSON.stringify(errors)}`);
    const held = await createAgents(client, agents);

    // One round trip: a small authenticated request through the same proxy (kept-alive connection).
    const roundTrip = async () => {
      const started = performance.now();
      const response = await request(`${proxy.url}/_simulator/requests`, {
        headers: { authorization: `Bearer ${sim.apiKey}`, "service-version": "2025-06-19" },
      });
      await response.body.text();
      return performance.now() - started;
    };
    const roundTrips: number[] = [];
    await roundTrip(); // the connection's handshake is not a round trip of a session already open
    for (let i = 0; i < ROUND_TRIPS; i++) roundTrips.push(await roundTrip());

    log(`${options.calls} call(s) of ${TURNS.length} caller turns, one at a time`);
    const { results, report } = await runSmoke({
      definitions: agents,
      held,
      selection: {},
      connection: client,
      concurrency: 1,
      earlyDecisions: false,
      out: { write: () => true },
      caller: { callerShape: callerShape({ message: undefined, end: undefined }, proxy.url) },
    });
    const failed = report.results.filter((r) => r.status !== "passed");
    if (failed.length > 0)
      throw new Error(`caller benchmark: ${failed.length} call(s) did not pass: ${failed[0]?.error}`);
    for (let i = 0; i < ROUND_TRIPS; i++) roundTrips.push(await roundTrip());

    const turns = report.results.flatMap((call, i) => turnTimes(call, results[i]?.callerLines ?? []));
    const overhead = turns.map((t) => t.caller - t.service);
    const rtt = stats(roundTrips);
    const ratio = quantile(overhead, 0.5) / quantile(roundTrips, 0.5);
    return {
      oneWayMs: options.oneWayMs,
      responseDelayMs: options.responseDelayMs,
      calls: options.calls,
      turns: turns.length,
      roundTripMs: rtt,
      callerMs: stats(turns.map((t) => t.caller)),
      serviceMs: stats(turns.map((t) => t.service)),
      overheadMs: { ...stats(overhead), max: Math.round(Math.max(...overhead)) },
      turnsWithinRoundTrip: overhead.filter((ms) => ms <= rtt.median).length,
      ratio: Number(ratio.toFixed(3)),
      holds: ratio <= MAX_RATIO,
    };
  } finally {
    await client.close();
    await proxy.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The figures as a table and the bound's verdict. */
export function callerTable(r: CallerBenchResult): string {
  const row = (what: string, s: { median: number; p95: number }, extra = "") =>
    `| ${what} | ${s.median} | ${s.p95} |${extra}\n`;
  return [
    `caller: ${r.calls} call(s) × ${r.turns / r.calls} turns, network ${r.oneWayMs} ms each way (delay proxy), agent response_delay_ms ${r.responseDelayMs}\n\n`,
    "| per turn (ms) | median | p95 |\n|---|---|---|\n",
    row("one round trip (a request through the proxy)", r.roundTripMs),
    row("the service's own response time (its events' created_at)", r.serviceMs),
    row("what the caller waited (line sent → first word received)", r.callerMs),
    row("the caller's overhead (waited − service's)", r.overheadMs),
    `\nbound "a caller adds at most one round trip per turn over the service's own response time": median overhead ${r.overheadMs.median} ms ÷ round trip ${r.roundTripMs.median} ms = ${r.ratio.toFixed(2)} (target ≤ ${MAX_RATIO}): ${r.holds ? "holds" : "DOES NOT HOLD"} (${r.turnsWithinRoundTrip} of ${r.turns} turns within one round trip; the largest overhead ${r.overheadMs.max} ms)\n`,
  ].join("");
}
