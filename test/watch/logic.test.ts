// The pure parts of watch and audit: windows, figures read tolerantly, verdicts, versions files,
// classification by key, and the resume of a list read after the client's retries gave up.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { InvalidRequestError, RateLimitError } from "../../src/api/index.ts";
import { PagedList } from "../../src/api/paging.ts";
import { cliOutcome } from "../../src/commands/errors.ts";
import type { Conversation } from "../../src/contract/index.ts";
import { InvalidInputError } from "../../src/errors/index.ts";
import type { HeldAgent } from "../../src/provider/index.ts";
import { attributionRule, attributionText, attributor } from "../../src/watch/attribute.ts";
import {
  classify,
  figures,
  parseDuration,
  percentile,
  previousWindow,
  type ReadCount,
  readAll,
  readHistory,
  resolveWindow,
  Tally,
  type Thresholds,
  trafficVerdict,
  versionsIn,
} from "../../src/watch/index.ts";

const conversation = (over: Partial<Conversation>): Conversation => ({
  id: "conv_1",
  agent_id: "ca_a@v1",
  livemode: true,
  created_at: "2026-11-23T08:00:00Z",
  status: "completed",
  completed_at: "2026-11-23T08:01:00Z",
  ...over,
});

/** The error `fn` throws (it must throw one of the model's invalid inputs). */
function invalidInput(fn: () => unknown): InvalidInputError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidInputError) return error;
    throw error;
  }
  throw new Error("it did not throw");
}

describe("windows", () => {
  it("reads durations and refuses anything else, naming the field (the CLI says its flag)", () => {
    expect(parseDuration("90m")).toBe(90 * 60_000);
    expect(parseDuration("1h30m")).toBe(90 * 60_000);
    expect(parseDuration("7d")).toBe(7 * 86_400_000);
    for (const bad of ["soon", "24", "1h soon", "0h", ""]) {
      const error = invalidInput(() => parseDuration(bad));
      expect(error).toMatchObject({ code: "AGENT_IAC_INVALID_INPUT", field: "since", value: bad });
      expect(error.message).toMatch(/^since must be /);
      expect(cliOutcome(error, {})).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--since must be /) });
    }
  });

  it("gives --since or --from/--to, and the equally long window before", () => {
    const now = new Date("2026-11-23T10:00:00Z");
    const w = resolveWindow({ since: "2h" }, "24h", now);
    expect(w.from.toISOString()).toBe("2026-11-23T08:00:00.000Z");
    expect(previousWindow(w)).toEqual({ from: new Date("2026-11-23T06:00:00Z"), to: w.from });
    const fixed = resolveWindow({ from: "2026-11-20T00:00:00Z", to: "2026-11-21T00:00:00Z" }, "24h", now);
    expect(fixed.to.toISOString()).toBe("2026-11-21T00:00:00.000Z");
    const said = (fn: () => unknown) => cliOutcome(invalidInput(fn), {}).message;
    expect(said(() => resolveWindow({ since: "1h", from: "2026-11-20T00:00:00Z" }, "24h", now))).toBe(
      "give either --since or --from/--to, not both",
    );
    expect(said(() => resolveWindow({ to: "2026-11-20T00:00:00Z" }, "24h", now))).toBe("--to needs --from");
    const yesterday = invalidInput(() => resolveWindow({ from: "yesterday" }, "24h", now));
    expect(yesterday).toMatchObject({ field: "from", value: "yesterday" });
    expect(cliOutcome(yesterday, {}).message).toBe(
      '--from must be an ISO 8601 date-time such as 2026-11-23T08:00:00Z, not "yesterday"',
    );
    expect(said(() => resolveWindow({ from: "2026-11-21T00:00:00Z", to: "2026-11-20T00:00:00Z" }, "24h", now))).toBe(
      "--to must be later than --from",
    );
  });
});

describe("figures", () => {
  it("reads either profile's shapes: failure_reason objects, sentiment objects, numeric strings", () => {
    const t = new Tally();
    t.addConversation(conversation({ duration_sec: 30, sentiment: "positive" }));
    t.addConversation(conversation({ duration_sec: "90", sentiment: { label: "negative", score: 0.2 } }));
    t.addConversation(
      conversation({ status: "ended", failure_reason: { code: "x", message: "y" }, completed_at: null }),
    );
    t.addConversation(conversation({ status: "in_progress", completed_at: null, duration_sec: null }));
    t.addFeedback(
      { id: "f", conversation_id: "conv_1", created_at: "", rating: "Thumbs_Down" },
      new Set(["thumbs_down"]),
    );
    t.addProcedure({ id: "p", name: "s", conversation_id: "c", agent_id: "pa", created_at: "", status: "pending" });
    t.addProcedure({
      id: "p",
      name: "s",
      conversation_id: "c",
      agent_id: "pa",
      created_at: "",
      status: "done",
      error: { m: 1 },
    });
    t.addProcedure({ id: "p", name: "s", conversation_id: "c", agent_id: "pa", created_at: "", status: "completed" });
    const f = figures(t);
    expect(f).toMatchObject({ calls: 4, finished: 3, unfinished: 1 });
    expect(f.failure_rate).toEqual({ count: 1, of: 3, value: 1 / 3 });
    expect(f.duration_sec).toEqual({ median: 30, p95: 90, measured: 2 });
    expect(f.negative_sentiment).toEqual({ count: 1, of: 2, value: 0.5 });
    expect(f.negative_feedback).toEqual({ count: 1, of: 1, value: 1 });
    expect(f.procedure_errors).toEqual({ count: 1, of: 2, value: 0.5, pending: 1 });
  });

  it("takes nearest-rank percentiles", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(95);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });
});

describe("verdicts", () => {
  const t: Thresholds = { maxFailureRateIncrease: 0.05, maxNegativeFeedbackIncrease: 0.1, minCalls: 20 };
  const withRate = (failed: number, of: number, negative = 0, feedbacks = 0) => {
    const tally = new Tally();
    for (let i = 0; i < of; i++) tally.addConversation(conversation(i < failed ? { status: "failed" } : {}));
    for (let i = 0; i < feedbacks; i++) {
      tally.addFeedback(
        { id: "f", conversation_id: "c", created_at: "", rating: i < negative ? "negative" : "positive" },
        new Set(["negative"]),
      );
    }
    return figures(tally);
  };
  const agent = { key: "support", version_id: "ca_new@v1" };
  const baseline = { version_id: "ca_old@v1", source: "stack history" as const };

  it("fails on a failure rate up by more than allowed, naming both counts", () => {
    const v = trafficVerdict(agent, withRate(50, 200), withRate(10, 200), baseline, t);
    expect(v.status).toBe("regressed");
    expect(v.message).toBe(
      "support: failure rate 25.0 % (50 of 200) on ca_new@v1 vs 5.0 % (10 of 200) on ca_old@v1: up 20.0 points, more than the allowed 5.0 points",
    );
  });

  it("passes within the threshold, and on an improvement", () => {
    expect(trafficVerdict(agent, withRate(12, 200), withRate(10, 200), baseline, t).status).toBe("ok");
    expect(trafficVerdict(agent, withRate(0, 200), withRate(50, 200), baseline, t).status).toBe("ok");
  });

  it("fails on negative feedback too", () => {
    const v = trafficVerdict(agent, withRate(0, 100, 15, 30), withRate(0, 100, 3, 30), baseline, t);
    expect(v.breaches.map((b) => b.figure)).toEqual(["negative feedback"]);
  });

  it("gives no verdict on too little traffic on either side, or without a previous version", () => {
    expect(trafficVerdict(agent, withRate(5, 10), withRate(0, 200), baseline, t).status).toBe("not_enough_traffic");
    expect(trafficVerdict(agent, withRate(5, 100), withRate(0, 5), baseline, t).status).toBe(
      "not_enough_baseline_traffic",
    );
    expect(trafficVerdict(agent, withRate(50, 100), null, null, t).status).toBe("no_baseline");
  });
});

describe("versions files", () => {
  it("reads a versions output, a whole stack output and a report", () => {
    expect(versionsIn({ support: "ca_a@v1", note: "x" })).toEqual({ support: "ca_a@v1" });
    expect(versionsIn({ versions: { support: "ca_a@v2" }, agents: {} })).toEqual({ support: "ca_a@v2" });
    expect(versionsIn({ agents: { support: { version_id: "ca_b@v1" } } })).toEqual({ support: "ca_b@v1" });
    expect(versionsIn({ format: "agent-iac-report", versions: { booking: "ca_c@v3" } })).toEqual({
      booking: "ca_c@v3",
    });
    expect(versionsIn([1, 2])).toBeUndefined();
    expect(versionsIn({ support: "ca_a" })).toBeUndefined();
  });
});

const agent = (key: string, id: string, version = 1): HeldAgent => ({
  key,
  kind: "conversational",
  id,
  version_id: `${id}@v${version}`,
  name: key,
  postprocess_agents: [],
  urn: `urn:pulumi:test::agents::x::${key}`,
});

describe("attribution", () => {
  it("takes a version id as it is and maps a bare id to the one version of that agent the stack knows", () => {
    const attribute = attributor(["ca_new@v1", "ca_old@v1", "pa_x@v1", "ca_two@v1", "ca_two@v2"]);
    expect(attribute.versionOf("ca_new@v1")).toBe("ca_new@v1");
    expect(attribute.versionOf("ca_zzz@v3")).toBe("ca_zzz@v3");
    expect(attribute.versionOf("ca_new")).toBe("ca_new@v1");
    expect(attribute.versionOf("ca_old")).toBe("ca_old@v1");
    // Two known versions of one agent: a bare id cannot say which; an unknown agent: nothing to map to.
    expect(attribute.versionOf("ca_two")).toBe("ca_two");
    expect(attribute.versionOf("ca_elsewhere")).toBe("ca_elsewhere");
    expect(attribute.counts).toEqual({ by_version_id: 2, by_bare_id: 2, unmapped_bare_id: 2 });
    expect(attributionRule(attribute.counts)).toBe("both");
    expect(attributionText(attribute.counts)).toContain(
      "2 by the bare agent id the service named (agent_id ca_x), mapped to the one version",
    );
    expect(attributionRule({ by_version_id: 0, by_bare_id: 5, unmapped_bare_id: 0 })).toBe("bare agent id");
    expect(attributionRule({ by_version_id: 0, by_bare_id: 0, unmapped_bare_id: 0 })).toBe("none");
  });
});

describe("classify", () => {
  const agents = { support: agent("support", "ca_new", 2) };
  const past = new Map([
    ["ca_old@v1", { ...agent("support", "ca_old"), last_update: 3, last_held_at: "2026-11-22T10:00:00.000Z" }],
  ]);

  it("names current, old (by history or by a shared id) and unknown versions", () => {
    expect(classify("ca_new@v2", agents, { past }).category).toBe("current");
    expect(classify("ca_new", agents, { past }).note).toContain("unpinned");
    expect(classify("ca_old@v1", agents, { past })).toEqual({
      category: "old",
      key: "support",
      note: "old version of support still taking calls (held until update 3, 2026-11-22T10:00:00.000Z)",
    });
    expect(classify("ca_new@v1", agents, { past: new Map() })).toMatchObject({ category: "old", key: "support" });
    expect(classify("ca_zzz@v1", agents, { past })).toMatchObject({ category: "unknown", key: null });
  });
});

describe("history", () => {
  const deployment = (agentId: string) => ({
    resources: [
      { urn: "urn:pulumi:s::agents::pulumi:pulumi:Stack::agents-s", type: "pulumi:pulumi:Stack" },
      {
        urn: "urn:pulumi:s::agents::pulumi-nodejs:dynamic/agents:ConversationalAgent::support",
        type: "pulumi-nodejs:dynamic/agents:ConversationalAgent",
        outputs: { agentId, versionId: `${agentId}@v1`, name: "Support", postprocess_agents: ["pa_x"] },
      },
    ],
  });

  it("reads a file backend's checkpoints (gzipped too) into the versions the stack no longer holds", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), "agent-iac-history-"));
    try {
      const dir = path.join(root, ".pulumi", "history", "agents", "s");
      await import("node:fs/promises").then((fs) => fs.mkdir(dir, { recursive: true }));
      const put = async (ns: string, agentId: string, version: number, gzip = false) => {
        const checkpoint = JSON.stringify({ version: 3, checkpoint: { latest: deployment(agentId) } });
        const name = `s-${ns}.checkpoint.json${gzip ? ".gz" : ""}`;
        await writeFile(path.join(dir, name), gzip ? gzipSync(checkpoint) : checkpoint);
        await writeFile(
          path.join(dir, `s-${ns}.history.json`),
          JSON.stringify({ kind: "update", endTime: 1795400000 + version }),
        );
      };
      await put("1795400000000000001", "ca_old", 1, true);
      await put("1795400000000000002", "ca_new", 2);
      const current = { support: agent("support", "ca_new") };
      const history = await readHistory({
        backendUrl: pathToFileURL(root).href,
        project: "agents",
        stack: "s",
        current,
      });
      expect(history.available).toBe(true);
      expect(history.updates).toBe(2);
      expect(history.past.get("ca_old@v1")).toMatchObject({
        key: "support",
        last_update: 1,
        postprocess_agents: ["pa_x"],
      });
      expect(history.past.has("ca_new@v1")).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("says why there is none on other backends", async () => {
    const history = await readHistory({ backendUrl: "postgres://h/db", project: "agents", stack: "s", current: {} });
    expect(history.available).toBe(false);
    expect(history.source).toMatch(/postgres backend/);
  });
});

describe("readAll", () => {
  /** Pages of two items; the pages in `failAt` fail `times` times with `error` first. */
  const source = (pages: number, failAt: number, times: number, error: () => Error) => {
    const fetched: (string | undefined)[] = [];
    let failures = 0;
    const open = (start: string | undefined) =>
      new PagedList<number, unknown>(
        async (cursor) => {
          const index = cursor === undefined ? 0 : Number(cursor);
          fetched.push(cursor);
          if (index === failAt && failures < times) {
            failures++;
            throw error();
          }
          const next = index + 1 < pages ? String(index + 1) : null;
          return { items: [index * 2, index * 2 + 1], cursor: next, body: {} };
        },
        start,
        { method: "GET", path: "/x" },
      );
    return { open, fetched };
  };
  const rateLimited = () => new RateLimitError({ message: "GET /x → 429", method: "GET", path: "/x", status: 429 });

  it("resumes at the page that failed, counting every page and item once", async () => {
    const { open, fetched } = source(5, 3, 1, rateLimited);
    const items: number[] = [];
    const count: ReadCount = { what: "x", pages: 0, items: 0, resumed: 0 };
    const said: string[] = [];
    await readAll(open, count, (i) => items.push(i), { resumeDelayMs: 1, onResume: (l) => said.push(l) });
    expect(items).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(count).toEqual({ what: "x", pages: 5, items: 10, resumed: 1 });
    expect(fetched).toEqual([undefined, "1", "2", "3", "3", "4"]);
    expect(said[0]).toContain("resuming at page 4");
  });

  it("gives up after its resumes, and at once on an error not worth waiting out", async () => {
    const stuck = source(5, 2, 10, rateLimited);
    const count: ReadCount = { what: "x", pages: 0, items: 0, resumed: 0 };
    await expect(readAll(stuck.open, count, () => {}, { resumeDelayMs: 1, maxResumes: 2 })).rejects.toThrow(/429/);
    expect(count.resumed).toBe(2);
    const refused = source(
      5,
      1,
      1,
      () => new InvalidRequestError({ message: "400", method: "GET", path: "/x", status: 400 }),
    );
    const other: ReadCount = { what: "x", pages: 0, items: 0, resumed: 0 };
    await expect(readAll(refused.open, other, () => {}, { resumeDelayMs: 1 })).rejects.toThrow(/400/);
    expect(other.resumed).toBe(0);
  });
});
