// The one builder of a smoke job from a stack's session (smokeJobFrom): what every use case that
// places smoke calls (smoke, start, plan --behave, try, drift, scenario derive --check) gets from
// the session, and what it may set itself. Pure: the session is a plain value.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors/index.ts";
import { type Connection, projectContext } from "../../src/settings/index.ts";
import { smokePlanOf } from "../../src/smoke/index.ts";
import { smokeJobFrom } from "../../src/usecases/smoke-job.ts";

const connection = (apiKey: string | undefined): Connection => ({
  baseUrl: "http://127.0.0.1:9200",
  apiKey,
  serviceVersion: undefined,
  keySource: undefined,
  loopback: true,
});

const session = (apiKey: string | undefined) => ({
  name: "acme/agents/dev",
  project: projectContext({ cwd: "/tmp/project", env: {} }),
  judge: { baseUrl: "http://127.0.0.1:9300/v1", model: "judge-model", apiKey: "judge-key", timeoutSec: 30 },
  caller: { message: "caller.message", end: "caller.end" },
  connection: connection(apiKey),
});

const plan = smokePlanOf([]);

describe("smokeJobFrom", () => {
  it("takes the stack's name, project, judge and caller settings and connection from the session", () => {
    const opened = session("service-key");
    const job = smokeJobFrom(opened, { plan, placement: { kind: "smoke" }, concurrency: 3, maxCallMinutes: 5 });
    expect(job).toMatchObject({
      stack: "acme/agents/dev",
      project: opened.project,
      judge: { settings: opened.judge },
      caller: opened.caller,
      plan,
      placement: { kind: "smoke" },
      concurrency: 3,
      maxCallMinutes: 5,
    });
    // No cache options given: the judge's defaults (no `cache` key at all).
    expect("cache" in job.judge).toBe(false);
    expect(job.connection()).toEqual({ baseUrl: "http://127.0.0.1:9200", apiKey: "service-key" });
  });

  it("asks for the session's key only when calls are placed, naming the stack when it has none", () => {
    // Building the job (a dry run's) needs no key …
    const job = smokeJobFrom(session(undefined), { plan, placement: { kind: "smoke" }, concurrency: 1, dryRun: true });
    // … placing calls does.
    expect(() => job.connection()).toThrow(ConfigError);
    expect(() => job.connection()).toThrow(/no API key for stack acme\/agents\/dev/);
  });

  it("keeps the run's judge cache options and its own connection (start's local service)", () => {
    const cache = { read: false, dir: ".judge-cache" };
    const elsewhere = { baseUrl: "http://127.0.0.1:9999", apiKey: "local-dev-key" };
    const job = smokeJobFrom(session(undefined), {
      plan,
      placement: { kind: "smoke" },
      concurrency: 4,
      judgeCache: cache,
      connection: () => elsewhere,
    });
    expect(job.judge.cache).toEqual(cache);
    expect(job.connection()).toBe(elsewhere);
  });
});
