// The HTML report labels the scenario's caller lines "caller", with their time, as the terminal,
// JSON and JUnit transcripts do: from a real call with a scripted caller on the simulator (port 0),
// and a call without a caller keeps "user".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerShape } from "../../src/caller/index.ts";
import { htmlReport } from "../../src/report/index.ts";
import { runSmoke } from "../../src/smoke/index.ts";
import { type ProjectService, projectService } from "../helpers/simulator.ts";

const TURNS = ["Can you check availability on Tuesday?", "Thanks, that is all."];
const agentFile = [
  "kind: conversational",
  "name: Desk",
  "description: d",
  "config:",
  "  personas: [{ name: Leo, voice: { id: male-1, provider: service } }]",
  "  tool: { tools: [{ ns: syscall, name: check_availability }] }",
  "smoke:",
  "  - name: with-caller",
  '    channel: { callee_no: "+15550100100" }',
  "    transport: ws",
  "    timeout: 30",
  "    caller:",
  `      turns: ${JSON.stringify(TURNS)}`,
  "    expect: { tool_calls: [check_availability] }",
  "  - name: without-caller",
  '    channel: { callee_no: "+15550100100" }',
  "    expect: { says: [this is Leo] }",
].join("\n");

/** The chat's entries of one call: `[who, bubble text]` in order. */
function chat(page: string, scenario: string): { who: string; text: string; cls: string }[] {
  const start = page.indexOf(`<ol class="chat"`, page.indexOf(`>${scenario}<`));
  const list = page.slice(start, page.indexOf("</ol>", start));
  return [
    ...list.matchAll(/<li class="([^"]*)"[^>]*><div class="who">(.*?)<\/div><div class="bubble">(.*?)<\/div>/g),
  ].map((m) => ({ cls: String(m[1]), who: String(m[2]), text: String(m[3]) }));
}

describe("caller lines in the HTML report", () => {
  let service: ProjectService;
  beforeAll(async () => {
    service = await projectService({ "agents/desk.yaml": agentFile });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("labels the caller's lines 'caller' with their time, in the chat and on the timeline; other calls say 'user'", async () => {
    const { sim, agents, held } = service;
    const { report } = await runSmoke({
      definitions: agents,
      held,
      selection: {},
      connection: { baseUrl: sim.url, apiKey: sim.apiKey },
      concurrency: 2,
      out: { write: () => true },
      caller: { callerShape: callerShape({ message: undefined, end: undefined }, sim.url) },
    });
    expect(report.results.map((r) => [r.scenario, r.status])).toEqual(
      expect.arrayContaining([
        ["with-caller", "passed"],
        ["without-caller", "passed"],
      ]),
    );
    // The JSON report marks them: the page reads that.
    const called = report.results.find((r) => r.scenario === "with-caller");
    expect(called?.entries.filter((e) => e.kind === "user").map((e) => e.by)).toEqual(["caller", "caller"]);

    const page = htmlReport(report);
    const withCaller = chat(page, "with-caller").filter((e) => e.cls.includes("user"));
    expect(withCaller.map((e) => e.text)).toEqual(TURNS);
    for (const entry of withCaller) {
      expect(entry.cls).toContain("caller");
      // "caller" and the line's time from the call's start.
      expect(entry.who).toMatch(/^caller <span class="at">\+[\d.,]+ (ms|s)<\/span>/);
    }
    const withoutCaller = chat(page, "without-caller").filter((e) => e.cls.includes("user"));
    expect(withoutCaller.length).toBeGreaterThan(0);
    for (const entry of withoutCaller) expect(entry.who).toMatch(/^user <span class="at">/);

    // The timeline's lane and each mark's title say "caller" for the call with a caller.
    const figures = page.split('<figure class="timeline">').slice(1);
    const callerFigure = figures.find((f) => f.includes("Timeline of with-caller"));
    const plainFigure = figures.find((f) => f.includes("Timeline of without-caller"));
    expect(callerFigure).toContain('text-anchor="end">caller</text>');
    expect(callerFigure).toContain(`caller: ${TURNS[0]}`);
    expect(plainFigure).toContain('text-anchor="end">user</text>');
    expect(plainFigure).not.toContain('text-anchor="end">caller</text>');
  });
});
