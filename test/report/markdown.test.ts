// The job summary's Markdown from report objects built here (pure logic).
import { describe, expect, it } from "vitest";
import { markdownText } from "../../src/escape/index.ts";
import { planMarkdown } from "../../src/report/index.ts";
import { jobSummary } from "../../src/report/markdown.ts";

const failedCall = (scenario: string, description: string) => ({
  agent: "support",
  scenario,
  iteration: 1,
  status: "failed" as const,
  version_id: "ca_1@v2",
  assertions: [{ description, passed: false, detail: "no match" }],
  timings: { duration_ms: 100 },
});

describe("jobSummary", () => {
  it("escapes text from agent files and the service: no HTML, links, images or table cells", () => {
    expect(markdownText(`<img src=x onerror=alert(1)> | ![x](http://e/) *b* \`c\`\nnext`)).toBe(
      "&lt;img src=x onerror=alert(1)&gt; \\| !\\[x\\](http:&#8203;//e/) \\*b\\* \\`c\\` next",
    );
    // Inert on GitHub (issue 41): no mention notifies a team or a user, no reference or URL is a link.
    expect(
      markdownText(
        "ping @acme/security and @mallory, see #12, acme/app#3, https://evil.example/x, www.evil.example, a@b.io",
      ),
    ).toBe(
      "ping @&#8203;acme/security and @&#8203;mallory, see #&#8203;12, acme/app#&#8203;3, https:&#8203;//evil.example/x, www&#8203;.evil.example, a@&#8203;b.io",
    );
    const summary = jobSummary({
      scenarios: [
        {
          agent: "support",
          scenario: "<b>x</b>",
          version_id: "ca_1@v2",
          verdict: "failed",
          iterations: 1,
          passes: 0,
          min_pass: 1,
        },
      ],
      results: [failedCall("<b>x</b>", "says <script>")],
    });
    expect(summary).not.toMatch(/<(b|script)>/);
    expect(summary).toContain("✗ says &lt;script&gt;: no match");
  });

  it("counts, bounds the list of failed scenarios, and says all passed with a check mark", () => {
    const many = Array.from({ length: 30 }, (_, i) => `s${i}`);
    const summary = jobSummary({
      summary: { failed: 30, calls: 30, scenarios: 30 },
      scenarios: many.map((scenario) => ({
        agent: "support",
        scenario,
        version_id: "ca_1@v2",
        verdict: "failed" as const,
        iterations: 1,
        passes: 0,
        min_pass: 1,
      })),
      results: many.map((s) => failedCall(s, "says hello")),
    });
    expect(summary.startsWith("### ❌ agent-iac smoke")).toBe(true);
    expect(summary).toContain("| 30 | 0 | 0 | 30 | 0 | 0 | 0 / 30 / 0 |");
    expect(summary).toContain("30 scenarios: 0 passed, 30 failed");
    expect(summary.match(/^- ✗ failed:/gm)).toHaveLength(25);
    expect(summary).toContain("- … and 5 more (see the HTML report)");
    const passed = (scenario: string) => ({
      agent: "support",
      scenario,
      version_id: "ca_1@v2",
      verdict: "passed" as const,
      iterations: 1,
      passes: 1,
      min_pass: 1,
    });
    const green = jobSummary({
      scenarios: [passed("a"), passed("b")],
      summary: { passed: 2, calls: 2, scenarios: 2 },
    });
    expect(green.startsWith("### ✅ agent-iac smoke")).toBe(true);
    expect(green).not.toContain("Failed scenarios");
  });
});

describe("jobSummary names whose fault each failed call was", () => {
  it("under each failed or flaky scenario, every call that did not pass with its fault", () => {
    const scenario = (name: string, verdict: "failed" | "flaky", passes: number) => ({
      agent: "support",
      scenario: name,
      version_id: "ca_1@v2",
      verdict,
      iterations: 3,
      passes,
      min_pass: verdict === "flaky" ? 2 : 3,
    });
    const call = (name: string, iteration: number, kind: string, fault: string | null) => ({
      ...failedCall(name, "books"),
      iteration,
      status: kind,
      outcome: { kind },
      fault,
      ...(kind === "passed" ? { assertions: [{ description: "books", passed: true }] } : {}),
      ...(kind === "error" ? { assertions: [], error: "POST /conversations → 503" } : {}),
    });
    const summary = jobSummary({
      scenarios: [scenario("books", "failed", 1), scenario("greets", "flaky", 2)],
      results: [
        call("books", 1, "failed", "agent"),
        call("books", 2, "error", "service"),
        call("books", 3, "passed", null),
        call("greets", 1, "passed", null),
        call("greets", 2, "failed", "caller"),
        call("greets", 3, "passed", null),
      ],
    } as never);
    expect(summary).toContain("  - calls: #1 failed (fault: agent), #2 could not complete (fault: service)");
    expect(summary).toContain("  - calls: #2 failed (fault: caller)");
  });
});

describe("the plan's Markdown (the pull request comment)", () => {
  it("renders a policy violation's text inert: no @org/team mention, no link", () => {
    const message =
      "model gpt-x is not allowed: ask @acme/platform-team or see https://evil.example/#1 (www.evil.example)";
    const markdown = planMarkdown({
      stack: "prod",
      overlays: [],
      agents: [
        {
          agent: "support",
          kind: "conversational",
          action: "unchanged",
          why: "config changed",
          fields: [],
          promptDiffs: {},
          violations: [{ rule: "agent-allowed-models", level: "mandatory", pack: "@acme/pack", message, urn: "urn:x" }],
        },
      ],
    });
    expect(markdown).toContain(
      "ask @&#8203;acme/platform-team or see https:&#8203;//evil.example/#&#8203;1 (www&#8203;.evil.example)",
    );
    expect(markdown).toContain("(@&#8203;acme/pack)");
    expect(markdown).not.toMatch(/@acme|https:\/\/|www\.evil/);
  });
});
