// A version id read from `--compare OLD` is data from a file (issue 41): its control characters
// (ESC, BEL, …) never reach the terminal raw — not on the old call's line, not in the dry run, not
// in the closing comparison — they are shown escaped like other hostile text. The smoke job runs
// old-vs-new against the simulator on port 0 (the old version does not exist there: its call fails).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseOldVersions } from "../src/compare/index.ts";
import { terminalSummary } from "../src/report/index.ts";
import { planSmoke } from "../src/smoke/index.ts";
import { runSmokeJob } from "../src/usecases/smoke-job.ts";
import { type ExampleService, exampleService } from "./helpers/simulator.ts";

// An OSC title change ended by BEL, a colour, a carriage return and a C1 CSI.
const HOSTILE = "ca_x\u001b]0;pwned\u0007\u001b[31m\r\u009b2J@v1";
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw control characters is the point.
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("a hostile version id from --compare OLD", () => {
  let service: ExampleService;
  beforeAll(async () => {
    service = await exampleService({ eventDelayMs: 2 });
  });
  afterAll(() => service?.close());

  const job = (dryRun: boolean) => {
    const old = parseOldVersions(JSON.stringify({ support: HOSTILE }), "old.json");
    return {
      stack: "dev",
      plan: planSmoke(service.agents, service.held, { agents: ["support"] }),
      placement: { kind: "compare" as const, old, failOn: "failure" as const },
      concurrency: 2,
      dryRun,
      judge: { settings: { baseUrl: undefined, model: undefined, apiKey: undefined, timeoutSec: 60 } },
      connection: () => ({ baseUrl: service.sim.url, apiKey: service.sim.apiKey }),
    };
  };

  it("is escaped on the old call's line and in the closing comparison", async () => {
    let printed = "";
    const out = { write: (text: string) => (printed += text), isTTY: false };
    const result = await runSmokeJob(job(false) as Parameters<typeof runSmokeJob>[0], {
      out,
      signal: new AbortController().signal,
    });
    expect(result.kind).toBe("ran");
    if (result.kind !== "ran") return;
    expect(result.oldResults.length).toBeGreaterThan(0);
    printed += terminalSummary(result.report);
    expect(printed).toContain("ca_x\\x1b]0;pwned\\x07\\x1b[31m\\r\\x9b2J@v1");
    // The old call's own line, as it finished.
    expect(printed).toMatch(/^! support\/greets-and-summarizes#1 \(ca_x\\x1b\]0;pwned\\x07/m);
    expect(printed).not.toMatch(RAW);
  });

  it("is escaped in the dry run", async () => {
    let printed = "";
    const out = { write: (text: string) => (printed += text), isTTY: false };
    await runSmokeJob(job(true) as Parameters<typeof runSmokeJob>[0], { out, signal: new AbortController().signal });
    expect(printed).toContain("ca_x\\x1b]0;pwned\\x07");
    expect(printed).not.toMatch(RAW);
  });
});
