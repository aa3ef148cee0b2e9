/// <reference lib="dom" />
// The HTML report of real smoke runs (a real `pulumi up` against the simulator, then
// `agent-iac smoke --json` through the CLI), opened from file:// in a real headless Chromium.
// The flaky verdict and the comparison are derived from real runs' JSON (their own commands land
// in parallel): a flaky scenario from a run whose first event stream was slow, a comparison from the run
// before and the run after a prompt change.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { htmlReport } from "../../../src/report/html/index.ts";
import { emitReport, jobSummary } from "../../../src/report/index.ts";
import { countScenarios, type Report, reportSchema } from "../../../src/results/index.ts";
import { projectRoot } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject, deployStack } from "../../helpers/agents-project.ts";
import { launchBrowser } from "../../helpers/browser.ts";
import { runCli } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, startTestSimulator } from "../../helpers/simulator.ts";

const API_KEY = "sk-html-e2e-7c1d94be20";
const TOKEN_PATTERN = /tok_[A-Za-z0-9_-]{24}/;
const INJECT_IMG = `<img src=x onerror="window.__pwned=1">`;
const INJECT_SCRIPT = `"><script>window.__pwned=2</script><svg onload="window.__pwned=3">`;
const REPORTS = path.join(projectRoot, "reports");

type Scenario = { name: string; [key: string]: unknown };

describe("the HTML report of a real smoke run, in headless Chromium", () => {
  let sandbox: PulumiSandbox;
  let sim: Awaited<ReturnType<typeof startTestSimulator>>;
  let project: AgentsProject;
  let browser: Browser;
  let tmp: string;
  /** Run A (version 1), run B (after a prompt change: version 2), run C (one slow stream). */
  const runs: Record<string, Report> = {};
  let smokeReport: Report;
  let compareReport: Report;

  /** What each run's own --html and job summary (GITHUB_STEP_SUMMARY) wrote. */
  const written: Record<string, { html: string; summary: string }> = {};

  const smoke = async (label: string, ...args: string[]) => {
    const json = path.join(tmp, `${label}.json`);
    const html = path.join(tmp, `${label}.html`);
    const summary = path.join(tmp, `${label}.summary.md`);
    const result = await runCli(["smoke", "--stack", "test", "--json", json, "--html", html, ...args], {
      cwd: project.dir,
      env: { ...process.env, ...sandbox.env, AGENT_IAC_API_KEY: API_KEY, GITHUB_STEP_SUMMARY: summary },
    });
    const text = await readFile(json, "utf8").catch(() => "");
    if (!text) throw new Error(`smoke ${label} wrote no report (exit ${result.code}): ${result.stderr}`);
    runs[label] = reportSchema.parse(JSON.parse(text));
    written[label] = {
      html: await readFile(html, "utf8").catch(() => ""),
      summary: await readFile(summary, "utf8").catch(() => ""),
    };
    return result;
  };

  const editSupport = async (edit: (scenarios: Scenario[]) => void) => {
    const file = path.join(project.dir, "agents", "support.yaml");
    const doc = parseDocument(await readFile(file, "utf8"));
    const scenarios = (doc.toJS().smoke ?? []) as Scenario[];
    edit(scenarios);
    doc.set("smoke", doc.createNode(scenarios));
    await writeFile(file, doc.toString());
  };

  /** Opens an HTML file from file://, blocking and recording every request but the document's own. */
  const open = async (html: string, name: string, viewport?: { width: number; height: number; scale?: number }) => {
    const file = path.join(tmp, `${name}.html`);
    await writeFile(file, html);
    const page = await browser.newPage();
    if (viewport)
      await page.setViewport({
        width: viewport.width,
        height: viewport.height,
        deviceScaleFactor: viewport.scale ?? 1,
      });
    const url = pathToFileURL(file).href;
    const requests: string[] = [];
    const errors: string[] = [];
    await page.setRequestInterception(true);
    page.on("request", (request) => {
      if (request.url() === url) return void request.continue();
      requests.push(request.url());
      void request.abort();
    });
    page.on("pageerror", (error) => errors.push(String(error)));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(url, { waitUntil: "load" });
    return { page, requests, errors, file };
  };

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "agent-iac-html-"));
    sandbox = await pulumiSandbox();
    sim = await startTestSimulator({ port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    project = await agentsProject(sandbox, { baseUrl: sim.url, apiKey: API_KEY });
    await editSupport((scenarios) => {
      scenarios.push(
        {
          name: "echoes-markup",
          channel: { callee_no: "+15550100100" },
          context: { simulation: { user_turns: [INJECT_IMG, INJECT_SCRIPT, "That's all, thank you."] } },
          expect: { says: ["I understand"] },
        },
        { name: "breaks-midway", channel: { callee_no: "+15550100100" }, expect: { says: ["this is Maya"] } },
        {
          name: "slow-once",
          channel: { callee_no: "+15550100100" },
          // One slow call of two is tolerated: a flaky scenario (with all required, an early
          // decision would stop after the slow first call).
          iterations: 2,
          min_pass: 1,
          expect: { says: ["this is Maya"], max_duration_sec: 1 },
        },
      );
    });
    await deployStack(project.stack);
    const a = await smoke("a", "--agent", "support", "--scenario", "breaks-midway", "--scenario", "echoes-markup");
    expect(a.code).toBe(0);

    // Version 2: a prompt change; the scenario now meets a service error after the greeting.
    await editSupport((scenarios) => {
      const scenario = scenarios.find((s) => s.name === "breaks-midway") as Scenario;
      scenario.context = { simulation: { outcome: "failed" } };
    });
    await writeFile(
      path.join(project.dir, "prompts", "support.md"),
      `${await readFile(path.join(project.dir, "prompts", "support.md"), "utf8")}\nMention the spring promotion.\n`,
    );
    await deployStack(project.stack);
    const b = await smoke(
      "b",
      ...["--scenario", "greets-and-summarizes", "--scenario", "checks-availability-and-books"],
      ...["--scenario", "echoes-markup", "--scenario", "breaks-midway"],
    );
    expect(b.code).toBe(1);

    // The first event stream of run C answers 1.5 s late: that iteration lasts too long, the other passes (flaky).
    await simulatorCall(sim, "POST", "/_simulator/faults", {
      route: "GET /conversations/{conversation_id}/events",
      count: 1,
      latency_ms: 1500,
    });
    const c = await smoke("c", "--agent", "support", "--scenario", "slow-once", "--concurrency", "1");
    await simulatorCall(sim, "DELETE", "/_simulator/faults");
    expect(c.code).toBe(0);
    expect(runs.c?.results.map((r) => r.status).sort()).toEqual(["failed", "passed"]);
    expect(runs.c?.scenarios.map((s) => s.verdict)).toEqual(["flaky"]);

    smokeReport = withFlaky(runs.b as Report, runs.c as Report);
    compareReport = comparison(runs.a as Report, runs.b as Report);
    browser = await launchBrowser();
    await mkdir(REPORTS, { recursive: true });
  }, 600_000);

  afterAll(async () => {
    await browser?.close();
    await project?.cleanup();
    await sim?.close();
    await sandbox?.cleanup();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it("shows the counts, verdicts, expectations, transcripts and one timeline per call of the JSON report", async () => {
    const html = htmlReport(smokeReport);
    await writeFile(path.join(REPORTS, "smoke-report.html"), html);
    await writeFile(path.join(REPORTS, "smoke-report.json"), JSON.stringify(smokeReport, null, 2));
    const { page, requests, errors } = await open(html, "smoke");
    expect(requests).toEqual([]);
    // No CSP refusal: the page's own stylesheet and script (allowed by their hashes) both apply.
    expect(errors).toEqual([]);
    expect(await page.$eval("li.tile", (el) => getComputedStyle(el).borderLeftWidth)).toBe("6px");
    expect(await page.$eval("#shown", (el) => el.textContent)).toMatch(/^Showing \d+ of \d+ scenarios$/);

    const tiles = await page.$$eval("li.tile", (els) =>
      Object.fromEntries(
        els.map((el) => [el.getAttribute("data-summary"), Number(el.querySelector(".n")?.textContent)]),
      ),
    );
    const s = smokeReport.summary;
    expect(tiles).toEqual({ passed: s.passed, failed: s.failed, flaky: 1, errors: s.errors, regressions: 0 });

    const sections = await page.$$eval("section.scenario", (els) =>
      els.map((el) => ({
        agent: el.getAttribute("data-agent"),
        scenario: el.getAttribute("data-scenario"),
        verdict: el.querySelector("h3 [data-verdict]")?.getAttribute("data-verdict"),
        text: el.querySelector("h3")?.textContent ?? "",
        calls: [...el.querySelectorAll("article.call")].map((a) => a.getAttribute("data-status")),
      })),
    );
    expect(sections.map(({ agent, scenario, verdict }) => ({ agent, scenario, verdict }))).toEqual(
      smokeReport.scenarios.map(({ agent, scenario, verdict }) => ({ agent, scenario, verdict })),
    );
    const verdicts = new Set(sections.map((x) => x.verdict));
    for (const v of ["passed", "failed", "flaky"]) expect(verdicts).toContain(v);
    // A verdict is a word next to its icon, not a colour.
    for (const section of sections) expect(section.text).toContain(section.verdict === "flaky" ? "≈ flaky" : "");
    expect(sections.find((x) => x.scenario === "breaks-midway")?.text).toContain("✗ failed");
    for (const section of sections) {
      const calls = smokeReport.results.filter((r) => r.agent === section.agent && r.scenario === section.scenario);
      expect(section.calls).toEqual(calls.map((c) => c.status));
    }

    // One timeline per call, spanning the call's duration.
    const timelines = await page.$$eval("svg.timeline-svg", (els) =>
      els.map((el) => el.getAttribute("data-duration-ms")),
    );
    expect(timelines).toEqual(smokeReport.results.map((r) => String(r.timings.duration_ms)));

    // Each call's conversation: the entries of the JSON report, in order, as text.
    for (const [index, call] of smokeReport.results.entries()) {
      const shown = await page.$$eval(`#c${index} ol.chat > li`, (els) =>
        els.map((el) => ({ kind: el.classList[1], text: el.querySelector(".bubble, code")?.textContent ?? "" })),
      );
      expect(shown.map((e) => e.kind)).toEqual(call.entries.map((e) => e.kind));
      call.entries.forEach((entry, i) => {
        if (entry.kind === "agent" || entry.kind === "user") expect(shown[i]?.text).toBe(entry.text);
        if (entry.kind === "tool") expect(shown[i]?.text).toBe(entry.name);
      });
    }
    const booking = smokeReport.results.findIndex((r) => r.scenario === "checks-availability-and-books");
    const args = await page.$eval(`#c${booking} li.tool pre`, (el) => el.textContent);
    expect(args).toContain('"request"');

    // The failed expectation, with the transcript lines it points at marked in the conversation.
    const failing = smokeReport.results.findIndex((r) => r.scenario === "breaks-midway");
    const failedCall = smokeReport.results[failing] as Report["results"][number];
    const unmet = failedCall.assertions.find((a) => !a.passed);
    expect(unmet?.description).toBe("no server.error events");
    const shownUnmet = await page.$$eval(`#c${failing} li.expectation[data-passed=false]`, (els) =>
      els.map((el) => ({
        text: el.textContent ?? "",
        context: [...el.querySelectorAll(".context-lines code")].map((c) => c.textContent),
        links: [...el.querySelectorAll(".context-lines a")].map((a) => a.getAttribute("href")),
      })),
    );
    expect(shownUnmet).toHaveLength(1);
    expect(shownUnmet[0]?.text).toContain("✗ unmet");
    expect(shownUnmet[0]?.text).toContain("no server.error events");
    expect(shownUnmet[0]?.context).toEqual(unmet?.context);
    expect(unmet?.context.some((line) => line.startsWith("error:"))).toBe(true);
    for (const href of shownUnmet[0]?.links ?? []) {
      const pointed = await page.$eval(`${href}`, (el) => ({ cls: el.className, text: el.textContent ?? "" }));
      expect(pointed.cls).toContain("pointed");
      expect(pointed.text).toContain(`unmet expectation ${failedCall.assertions.indexOf(unmet as never) + 1}`);
    }
    expect(await page.$eval(`#c${failing} li.turn.error`, (el) => el.className)).toContain("pointed");
    await page.close();
  });

  it("filters by failed only and by agent, and searches the transcripts, without a server", async () => {
    const { page, requests } = await open(htmlReport(smokeReport), "filters");
    const visible = () =>
      page.$$eval("section.scenario", (els) =>
        els.filter((el) => !el.hidden).map((el) => el.getAttribute("data-scenario")),
      );
    const all = smokeReport.scenarios.map((s) => s.scenario);
    expect(await visible()).toEqual(all);
    expect(await page.$eval("#shown", (el) => el.textContent)).toBe(`Showing ${all.length} of ${all.length} scenarios`);

    await page.click("#failed-only");
    expect(await visible()).toEqual(smokeReport.scenarios.filter((s) => s.verdict !== "passed").map((s) => s.scenario));
    await page.click("#failed-only");

    await page.select("#agent", "booking");
    expect(await visible()).toEqual(["checks-availability-and-books"]);
    await page.select("#agent", "");

    // Search finds text inside a transcript (a closed iteration opens to show it).
    await page.type("#search", "Tuesday at 10am");
    expect(await visible()).toEqual(["checks-availability-and-books"]);
    await page.$eval("#search", (el) => {
      (el as HTMLInputElement).value = "";
    });
    await page.type("#search", "no such words anywhere");
    expect(await visible()).toEqual([]);
    expect(await page.$eval("#no-match", (el) => (el as HTMLElement).hidden)).toBe(false);

    // The keyboard: "/" jumps to the search box; Tab reaches an iteration and Enter opens it.
    await page.$eval("#search", (el) => (el as HTMLInputElement).blur());
    await page.keyboard.press("/");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("search");
    await page.$eval("#search", (el) => {
      (el as HTMLInputElement).value = "";
      el.dispatchEvent(new Event("input"));
    });
    // Tab from the search box passes the filters and reaches the first iteration; Enter opens it.
    const focused: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press("Tab");
      focused.push(await page.evaluate(() => document.activeElement?.tagName ?? ""));
    }
    expect(focused).toEqual(["INPUT", "SELECT", "SUMMARY"]);
    const details = () =>
      page.evaluate(() => (document.activeElement?.parentElement as HTMLDetailsElement | null)?.open);
    const before = await details();
    expect(typeof before).toBe("boolean");
    await page.keyboard.press("Enter");
    expect(await details()).toBe(!before);
    expect(requests).toEqual([]);
    await page.close();
  });

  it("renders markup from a transcript as text: nothing injected runs", async () => {
    const html = htmlReport(smokeReport);
    const { page, requests } = await open(html, "inject");
    const index = smokeReport.results.findIndex((r) => r.scenario === "echoes-markup");
    const bubbles = await page.$$eval(`#c${index} li.turn.user .bubble`, (els) => els.map((el) => el.textContent));
    expect(bubbles).toEqual([INJECT_IMG, INJECT_SCRIPT, "That's all, thank you."]);
    const agentSaid = await page.$$eval(`#c${index} li.turn.agent .bubble`, (els) => els.map((el) => el.textContent));
    expect(agentSaid).toContain(`I understand: ${INJECT_IMG}`);
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.$$eval("img", (els) => els.length)).toBe(0);
    expect(await page.$$eval("script", (els) => els.length)).toBe(1);
    expect(await page.$$eval("main svg:not(.timeline-svg)", (els) => els.length)).toBe(0);
    expect(requests).toEqual([]);
    // Nothing secret from the run reaches the page.
    expect(html).not.toContain(API_KEY);
    expect(html).not.toMatch(TOKEN_PATTERN);
    await page.close();
  });

  it("draws each event at its time when the report has at_ms, and the latencies when it has none", async () => {
    // Event times as the gates work will record them (at_ms from the call's start), laid over a real run.
    const timed = structuredClone(smokeReport);
    for (const call of timed.results) {
      const step = call.timings.duration_ms / (call.entries.length + 1);
      call.entries.forEach((entry, i) => {
        entry.at_ms = Math.round(step * (i + 1));
        if (entry.kind === "tool") entry.returned_at_ms = Math.round(step * (i + 1.5));
      });
      call.latency = { first_response_ms: Math.round(step), response_ms: [Math.round(step / 2)], tool_ms: [] };
    }
    const untimed = structuredClone(smokeReport);
    untimed.results[0]?.entries.forEach((e) => {
      e.at_ms = null;
    });
    await writeFile(path.join(REPORTS, "timed-report.html"), htmlReport(timed));
    const { page } = await open(htmlReport(timed), "timed");
    const drawn = await page.$$eval("svg.timeline-svg", (els) =>
      els.map((el) => ({
        mode: el.getAttribute("data-mode"),
        markers: Number(el.getAttribute("data-markers")),
        marks: el.querySelectorAll(".mark-agent, .mark-user, .mark-tool, .mark-error").length,
      })),
    );
    expect(drawn.map((d) => d.mode)).toEqual(timed.results.map(() => "events"));
    expect(drawn.map((d) => d.markers)).toEqual(timed.results.map((r) => r.entries.length));
    expect(drawn.map((d) => d.marks)).toEqual(timed.results.map((r) => r.entries.length));
    // Each user turn's wait for the agent's reply, as a bar from the turn to the reply.
    const waits = await page.$$eval("svg.timeline-svg", (els) =>
      els.map((el) => el.querySelectorAll(".mark-wait").length),
    );
    expect(waits).toEqual(
      timed.results.map(
        (r) =>
          r.entries.filter((e, i) => e.kind === "user" && r.entries.slice(i + 1).some((n) => n.kind === "agent"))
            .length,
      ),
    );
    expect(Math.max(...waits)).toBeGreaterThan(0);
    await page.close();

    const plain = await open(htmlReport(untimed), "untimed");
    const first = await plain.page.$eval("svg.timeline-svg", (el) => ({
      mode: el.getAttribute("data-mode"),
      caption: el.closest("figure")?.querySelector("figcaption")?.textContent ?? "",
    }));
    expect(first.mode).not.toBe("events");
    expect(first.caption).toContain("call ");
    await plain.page.close();
  });

  it("shows a comparison's old and new calls side by side with the flipped expectation highlighted", async () => {
    const html = htmlReport(compareReport);
    await writeFile(path.join(REPORTS, "compare-report.html"), html);
    const { page, requests } = await open(html, "compare");
    expect(requests).toEqual([]);
    expect(await page.$eval("li.tile[data-summary=regressions] .n", (el) => el.textContent)).toBe("1");
    const regression = await page.$eval("section.scenario[data-outcome=regression]", (el) => ({
      scenario: el.getAttribute("data-scenario"),
      heading: el.querySelector("h3")?.textContent ?? "",
      flips: [...el.querySelectorAll("tr[data-flip=true]")].map((tr) => tr.textContent ?? ""),
      sides: [...el.querySelectorAll(".side-col")].map((c) => ({
        side: c.getAttribute("data-side"),
        version: c.querySelector(".side-title code")?.textContent,
        calls: [...c.querySelectorAll("article.call")].map((a) => a.getAttribute("data-status")),
      })),
      diff: el.querySelector("pre.diff")?.textContent ?? "",
    }));
    expect(regression.scenario).toBe("breaks-midway");
    expect(regression.heading).toContain("↓ regression");
    expect(regression.flips).toHaveLength(1);
    expect(regression.flips[0]).toContain("flipped");
    expect(regression.flips[0]).toContain("no server.error events");
    const old = runs.a?.versions.support;
    const fresh = runs.b?.versions.support;
    expect(old).not.toBe(fresh);
    expect(regression.sides).toEqual([
      { side: "old", version: old, calls: ["passed"] },
      { side: "new", version: fresh, calls: ["failed"] },
    ]);
    expect(regression.diff).toMatch(/^\+ error:/m);
    // Side by side on a wide window; one under the other at 200 % zoom, with no sideways scrolling.
    const columns = await page.$eval("section.scenario[data-outcome=regression] .sides", (el) =>
      [...el.children].map((c) => Math.round(c.getBoundingClientRect().top)),
    );
    expect(columns[0]).toBe(columns[1]);
    await page.close();

    const zoomed = await open(html, "compare-zoomed", { width: 640, height: 900, scale: 2 });
    const layout = await zoomed.page.evaluate(() => ({
      overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      tops: [...(document.querySelector("section.scenario[data-outcome=regression] .sides")?.children ?? [])].map((c) =>
        Math.round(c.getBoundingClientRect().top),
      ),
    }));
    expect(layout.overflow).toBeLessThanOrEqual(0);
    expect(layout.tops[1]).toBeGreaterThan(layout.tops[0] as number);
    await zoomed.page.close();
  });

  it("keeps a 100-call run well under 2 MB", () => {
    const big = structuredClone(smokeReport);
    const calls = big.results;
    big.results = Array.from(
      { length: 100 },
      (_, i) => ({ ...structuredClone(calls[i % calls.length]), iteration: i + 1 }) as Report["results"][number],
    );
    const bytes = Buffer.byteLength(htmlReport(big));
    console.info(`HTML report of 100 calls: ${(bytes / 1024).toFixed(0)} KiB`);
    expect(bytes).toBeLessThan(1024 * 1024);
  });

  it("writes the job summary: counts, failed scenarios with their unmet expectations, flaky ones, regressions", async () => {
    const summary = jobSummary(compareReport);
    expect(summary).toContain("**Regressions**");
    expect(summary).toMatch(/↓ \*\*support\*\* \/ breaks-midway: passed at `[^`]+@v\d+` → failed at `[^`]+@v\d+`/);
    expect(summary).toContain("✓ → ✗ no server.error events");
    const smokeSummary = jobSummary(smokeReport);
    expect(smokeSummary).toMatch(/✗ failed: \*\*support\*\* \/ breaks-midway/);
    expect(smokeSummary).toContain("  - ✗ no server.error events: 1 error(s)");
    expect(smokeSummary).toMatch(/≈ \*\*support\*\* \/ slow-once: 1 of 2 passed \(needs 1\)/);
    expect(smokeSummary).not.toContain("<img");
    expect(smokeSummary).not.toContain(API_KEY);
    const file = path.join(tmp, "step-summary.md");
    await writeFile(file, "earlier step\n");
    expect(await emitReport(smokeReport, { within: os.tmpdir(), env: { GITHUB_STEP_SUMMARY: file } })).toBe(1);
    expect(await readFile(file, "utf8")).toBe(`earlier step\n${smokeSummary}\n`);
    await emitReport(smokeReport, { within: os.tmpdir(), env: {} });
    expect(await readFile(file, "utf8")).toBe(`earlier step\n${smokeSummary}\n`);
  });

  it("smoke --html writes the page of its own JSON report, and under GitHub Actions appends the job summary", () => {
    const b = runs.b as Report;
    expect(written.b?.html).toBe(htmlReport(b));
    expect(written.b?.summary).toBe(`${jobSummary(b)}\n`);
    expect(written.b?.summary).toMatch(/✗ failed: \*\*support\*\* \/ breaks-midway/);
    expect(written.a?.summary).not.toContain("failed: **");
  });

  it("draws every mark with a glyph the browser's fonts have, and a flaky card's bar in the flaky colour", async () => {
    const { page } = await open(htmlReport(smokeReport), "marks", { width: 1100, height: 1300 });
    // Each mark drawn as the page draws it, against the box of a character no font has.
    const missing = await page.evaluate(() => {
      const canvas = document.createElement("canvas");
      canvas.width = 64;
      canvas.height = 64;
      const context = canvas.getContext("2d") as CanvasRenderingContext2D;
      const draw = (text: string, font: string) => {
        context.clearRect(0, 0, 64, 64);
        context.font = font.replace(/\d+(\.\d+)?px/, "32px");
        context.fillText(text, 4, 44);
        return context.getImageData(0, 0, 64, 64).data.join(",");
      };
      const marks = [...document.querySelectorAll<HTMLElement>("[aria-hidden=true]")];
      return marks
        .map((el) => ({ text: el.textContent?.trim() ?? "", font: getComputedStyle(el).font }))
        .filter(({ text, font }) => [...text].some((c) => c.trim() && draw(c, font) === draw("\u{10FFFD}", font)))
        .map(({ text }) => text);
    });
    expect(missing).toEqual([]);
    expect(await page.$eval(".headline .mark", (el) => el.textContent)).toBe("✗");
    const bars = await page.$$eval("section.scenario[data-attention=true]", (els) =>
      Object.fromEntries(els.map((el) => [el.getAttribute("data-verdict"), getComputedStyle(el).borderLeftColor])),
    );
    const colour = (name: string) =>
      page.evaluate((v) => {
        const probe = document.createElement("span");
        probe.style.color = `var(${v})`;
        document.body.append(probe);
        const value = getComputedStyle(probe).color;
        probe.remove();
        return value;
      }, name);
    expect(bars.flaky).toBe(await colour("--warn"));
    expect(bars.failed).toBe(await colour("--bad"));
    await page.screenshot({ path: path.join(tmp, "marks.png") });
    await page.close();
  });

  it("saves a screenshot of the report for the README", async () => {
    const { page } = await open(htmlReport(smokeReport), "screenshot", { width: 1100, height: 1300 });
    await page.click("#failed-only");
    const shot = path.join(REPORTS, "report.png");
    await page.screenshot({ path: shot });
    expect((await readFile(shot)).subarray(1, 4).toString()).toBe("PNG");
    await page.close();
  });
});

/** Run B with run C's scenario added as flaky (one of two iterations passed, one required), as the gates work reports it. */
function withFlaky(b: Report, c: Report): Report {
  const report = structuredClone(b);
  const flaky = c.scenarios.map((s) => ({ ...s, verdict: "flaky" as const, min_pass: 1 }));
  report.scenarios.push(...flaky);
  report.results.push(...c.results);
  // The summary as every surface counts it: scenarios first, calls second.
  report.summary = countScenarios(report);
  return report;
}

/** Old (run A) versus new (run B) for the scenarios both ran, as `smoke --compare` reports it. */
function comparison(a: Report, b: Report): Report {
  const report = structuredClone(b);
  const both = b.scenarios.filter((s) => a.scenarios.some((o) => o.agent === s.agent && o.scenario === s.scenario));
  report.kind = "compare";
  report.old_versions = a.versions;
  report.results = [
    ...a.results.map((r) => ({ ...r, side: "old" as const })),
    ...b.results.filter((r) => both.some((s) => s.scenario === r.scenario && s.agent === r.agent)),
  ];
  report.scenarios = both.map((s) => {
    const old = a.scenarios.find(
      (o) => o.agent === s.agent && o.scenario === s.scenario,
    ) as Report["scenarios"][number];
    const oldCall = a.results.find((r) => r.scenario === s.scenario) as Report["results"][number];
    const newCall = b.results.find((r) => r.scenario === s.scenario) as Report["results"][number];
    const outcome = (was: boolean, is: boolean) =>
      was === is ? (is ? "unchanged" : "still_failing") : is ? "fixed" : "regression";
    return {
      ...s,
      comparison: {
        old_version_id: old.version_id,
        new_version_id: s.version_id,
        old_verdict: old.verdict,
        new_verdict: s.verdict,
        outcome: outcome(old.verdict === "passed", s.verdict === "passed"),
        expectations: newCall.assertions.map((e) => {
          const was = oldCall.assertions.find((o) => o.description === e.description)?.passed ?? null;
          return { description: e.description, old: was, new: e.passed, outcome: outcome(was ?? false, e.passed) };
        }),
        transcript_diff: [
          ...oldCall.transcript.filter((l) => !newCall.transcript.includes(l)).map((l) => `- ${l}`),
          ...newCall.transcript.map((l) => (oldCall.transcript.includes(l) ? `  ${l}` : `+ ${l}`)),
        ],
        duration_delta_ms: newCall.timings.duration_ms - oldCall.timings.duration_ms,
        response_latency_delta_ms: [],
        procedure_differences: [],
      },
    };
  });
  report.summary = countScenarios(report);
  return report;
}
