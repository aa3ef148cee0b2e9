// What `watch` and `audit` decide around the traffic they read (traffic.ts): the window and the
// versions file checked before any stack is read; audit's attribution of the window's calls to the
// stack's versions, with unknown agent ids apart; watch refusing a stack with no conversational
// agent, and asking the local simulator for the service id GET /feedbacks needs. The example
// agents created on a simulator on port 0; the stack's side is the plain record openTraffic returns.
// The use cases the commands call (watchStack, auditStack: a real stack opened, their notes and
// codes, an interruption) are traffic.e2e.test.ts's.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, InvalidInputError } from "../../src/errors/index.ts";
import { projectContext } from "../../src/settings/index.ts";
import { auditTraffic, type OpenedTraffic, openTraffic, watchTraffic } from "../../src/usecases/traffic.ts";
import { resolveWindow } from "../../src/watch/index.ts";
import { type ExampleService, exampleService } from "../helpers/simulator.ts";
import { allEvents, createConversation, createConversational } from "../simulator/helpers.ts";

let service: ExampleService;
let stranger: string;

const THRESHOLDS = { maxFailureRateIncrease: 0.05, maxNegativeFeedbackIncrease: 0.05, minCalls: 1 };

function opened(overrides: Partial<OpenedTraffic> = {}): OpenedTraffic {
  const now = new Date(Date.now() + 60_000);
  return {
    stack: "dev",
    agents: service.held,
    history: { available: false, source: "no history in this test", updates: 0, past: new Map() },
    connection: {
      baseUrl: service.sim.url,
      apiKey: service.sim.apiKey,
      serviceVersion: undefined,
      keySource: "AGENT_IAC_API_KEY",
      loopback: true,
    },
    window: resolveWindow({ since: "1h" }, "24h", now),
    baselineFile: undefined,
    now,
    ...overrides,
  };
}

const watchRequest = { baselineWindow: "previous" as const, includeTestCalls: true, thresholds: THRESHOLDS };

beforeAll(async () => {
  service = await exampleService({ eventDelayMs: 1 });
  const booking = service.held.booking?.id as string;
  // A conversation on the stack's agent, and one on an agent the stack never held.
  stranger = (await createConversational(service.sim)).id;
  const calls = await Promise.all([
    createConversation(service.sim, booking),
    createConversation(service.sim, stranger),
  ]);
  await Promise.all(calls.map((c) => allEvents(service.sim, c.id)));
});
afterAll(async () => {
  await service?.close();
});

describe("openTraffic", () => {
  it("a bad window or versions file is refused before the stack is read", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "traffic-usecase-"));
    try {
      const project = projectContext({ cwd: dir, env: {} });
      const both = await openTraffic({
        project,
        stack: "dev",
        window: { since: "1h", from: "2026-11-01T00:00:00Z" },
      }).catch((e: unknown) => e);
      expect(both).toBeInstanceOf(InvalidInputError);
      expect(both).toMatchObject({ field: "since" });
      const file = path.join(dir, "versions.json");
      const missing = await openTraffic({ project, stack: "dev", window: {}, baseline: file }).catch((e: unknown) => e);
      expect(missing).toBeInstanceOf(InvalidInputError);
      expect(missing).toMatchObject({ field: "baseline", value: file });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("auditTraffic", () => {
  it("attributes the window's calls to the stack's versions; an agent id the stack never held is unknown", async () => {
    const { result, report } = await auditTraffic(opened(), { failOnUnknown: true }, { resume: {} });
    expect(result.current.find((row) => row.key === "booking")).toMatchObject({ calls: 1, category: "current" });
    expect(result.unknown.map((row) => [row.agent_id, row.key, row.calls])).toEqual([
      [expect.stringContaining(stranger), null, 1],
    ]);
    expect(report.kind).toBe("audit");
    expect(report.fail_on).toBe("unknown");
    expect(report.versions).toEqual(
      Object.fromEntries(Object.values(service.held).map((agent) => [agent.key, agent.version_id])),
    );
    expect(report.notes).toEqual(["stack history: no history in this test"]);
  });
});

describe("watchTraffic", () => {
  it("a stack holding no conversational agent is a configuration error", async () => {
    const procedural = Object.fromEntries(Object.entries(service.held).filter(([, a]) => a.kind === "procedural"));
    const error = await watchTraffic(opened({ agents: procedural }), watchRequest, { resume: {} }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'stack "dev" holds no conversational agents: run `pulumi up` (or `npm start`) first',
    );
  });

  it("the local simulator's service id is asked for feedback; a remote service without --service-id is said unmeasured", async () => {
    const local = await watchTraffic(opened(), watchRequest, { resume: {} });
    expect(local.result.feedback_read).toBe(true);
    expect(local.result.notes).not.toContain("negative feedback not measured: GET /feedbacks needs --service-id");
    expect(local.result.agents.map((a) => a.key).sort()).toEqual(["booking", "support"]);
    const remote = opened({ connection: { ...opened().connection, loopback: false } });
    const unmeasured = await watchTraffic(remote, watchRequest, { resume: {} });
    expect(unmeasured.result.feedback_read).toBe(false);
    expect(unmeasured.result.notes).toContain("negative feedback not measured: GET /feedbacks needs --service-id");
    const given = await watchTraffic(remote, { ...watchRequest, serviceId: service.sim.serviceId }, { resume: {} });
    expect(given.result.feedback_read).toBe(true);
  });
});
