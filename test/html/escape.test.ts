// Every place the page shows text from an agent file or the service escapes it; a report with
// missing fields still renders. Pure: the report objects are built here.
import { describe, expect, it } from "vitest";
import { htmlReport, type ReportInput } from "../../src/report/html/index.ts";

const HOSTILE = `"><img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'`;

/** A report in which every string the page shows is hostile. */
function hostileReport(): ReportInput {
  const call = {
    agent: HOSTILE,
    scenario: HOSTILE,
    iteration: 1,
    side: "old" as const,
    status: "failed" as const,
    version_id: HOSTILE,
    conversation_id: HOSTILE,
    events_url: HOSTILE,
    started_at: HOSTILE,
    error: HOSTILE,
    assertions: [{ description: HOSTILE, passed: false, detail: HOSTILE, context: [`agent: ${HOSTILE}`, HOSTILE] }],
    transcript: [`agent: ${HOSTILE}`],
    entries: [
      { kind: "agent" as const, text: HOSTILE, at_ms: 5 },
      { kind: "user" as const, text: HOSTILE, at_ms: 10 },
      {
        kind: "tool" as const,
        name: HOSTILE,
        call_id: HOSTILE,
        arguments: { [HOSTILE]: HOSTILE },
        result: HOSTILE,
        at_ms: 12,
        returned_at_ms: 20,
      },
      { kind: "error" as const, error: { message: HOSTILE }, at_ms: 30 },
    ],
    procedures: [{ key: HOSTILE, status: HOSTILE, output: { summary: HOSTILE } }],
    timings: { duration_ms: 40, time_to_first_agent_message_ms: 5 },
  };
  return {
    kind: "compare",
    stack: HOSTILE,
    created_at: HOSTILE,
    versions: { [HOSTILE]: HOSTILE },
    old_versions: { [HOSTILE]: HOSTILE },
    notes: [HOSTILE],
    scenarios: [
      {
        agent: HOSTILE,
        scenario: HOSTILE,
        version_id: HOSTILE,
        verdict: "failed",
        iterations: 1,
        passes: 0,
        min_pass: 1,
        latency: { bounds: { [HOSTILE]: 10 }, exceeded: [HOSTILE] },
        comparison: {
          old_version_id: HOSTILE,
          new_version_id: HOSTILE,
          old_verdict: "passed",
          new_verdict: "failed",
          outcome: "regression",
          expectations: [{ description: HOSTILE, old: true, new: false, outcome: "regression" }],
          transcript_diff: [`- ${HOSTILE}`, `+ ${HOSTILE}`],
          procedure_differences: [HOSTILE],
        },
      },
    ],
    results: [call, { ...call, side: "new", tool_calls: [HOSTILE], entries: [] }],
  };
}

describe("htmlReport", () => {
  it("escapes every text from the report: no element or attribute can be injected", () => {
    const page = htmlReport(hostileReport());
    expect(page).not.toContain("<img");
    expect(page).not.toContain('onerror="');
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toContain("window.__pwned=2</script>");
    expect(page).toContain("&quot;&gt;&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;");
  });

  it("allows no script but its own and no request at all (Content-Security-Policy)", () => {
    const page = htmlReport(hostileReport());
    const policy =
      page.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1]?.replaceAll("&#39;", "'") ?? "";
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(policy).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(policy).not.toContain("unsafe");
    expect(page).not.toMatch(/\s(src|href)="(https?:)?\/\//);
  });

  it("bounds a runaway call: at most 1000 entries and 20,000 characters of one value", () => {
    const entries = Array.from({ length: 3000 }, (_, i) => ({ kind: "user" as const, text: `turn ${i}` }));
    const page = htmlReport({
      results: [
        {
          agent: "support",
          scenario: "long",
          iteration: 1,
          status: "passed",
          version_id: "ca_1@v1",
          entries: [{ kind: "agent" as const, text: "x".repeat(50_000) }, ...entries],
          timings: { duration_ms: 100 },
        },
      ],
    });
    expect(page).toContain("… (30000 more characters)");
    expect(page).toContain("turn 998<");
    expect(page).not.toContain("turn 999<");
    expect(page).toContain("… and 2001 more entries: see the JSON report.");
    expect(Buffer.byteLength(page)).toBeLessThan(500_000);
  });

  it("renders a report with only defaults, and an old one without entries (its transcript lines instead)", () => {
    expect(htmlReport({})).toContain("Smoke run");
    const page = htmlReport({
      results: [
        {
          agent: "support",
          scenario: "greets",
          iteration: 1,
          status: "passed",
          version_id: "ca_1@v1",
          transcript: ["agent: Hello", "tool lookup({}) → {}"],
          timings: { duration_ms: 100 },
        },
      ],
    });
    // No scenario summary claims the call: it gets its own group, with a verdict from its status.
    expect(page).toContain('data-scenario="greets" data-verdict="passed"');
    expect(page).toContain("<code>tool lookup({}) → {}</code>");
    expect(page).toContain('data-mode="none"');
  });
});
