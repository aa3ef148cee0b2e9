/// <reference lib="dom" />
// `agent-iac judge label` as a person uses it: the real CLI in its own process, its page in a real
// headless Chromium driven with the keyboard alone, Ctrl+C (SIGINT) between two runs, and the labels
// it wrote read by `judge check` against the repository's example judge on port 0.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { projectRoot } from "../../../src/workspace/index.ts";
import { launchBrowser } from "../../helpers/browser.ts";
import { CLI, runCli } from "../../helpers/cli.ts";
import { type DraftModel, startDraftModel } from "../../helpers/draft-model.ts";
import { JUDGE_MODEL, judgedReport, REASON_MARK } from "../../labels/fixture.ts";

const HOSTILE = "<img src=x onerror=alert(1)>";
const MAYA = 'the agent introduces herself: "this is Maya"';
const THANKS = 'the agent says "thank you for calling"';

/** Six calls, the judge passing five: call 1's agent says the hostile line. */
const CALLS = Array.from({ length: 6 }, (_, i) => ({
  rubric: i % 2 === 0 ? MAYA : THANKS,
  verdict: i === 4 ? ("fail" as const) : ("pass" as const),
  transcript: [
    i === 0 ? `agent: ${HOSTILE}` : `agent: Hello, this is Maya (call ${i + 1}).`,
    `caller: I would like a refund for order A-${i + 1} (at 1.20 s)`,
    `tool lookup_order({"order":"A-${i + 1}"}) → {"status":"shipped"}`,
    "agent: Done. Thank you for calling.",
  ],
}));

type LabelRun = { url: string; child: ChildProcess; exited: Promise<number>; stdout: () => string };
type FileLabel = { human: string; labeller: string; rubric: string; transcript: string[]; judge: { verdict: string } };

describe("judge label in a real headless Chromium", () => {
  let dir: string;
  let browser: Browser;
  let model: DraftModel;
  const runs: LabelRun[] = [];
  /** The sample's position of the call whose agent says the hostile line. */
  let hostileIndex = -1;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-label-"));
    await writeFile(path.join(dir, "report.json"), JSON.stringify(judgedReport(CALLS)));
    browser = await launchBrowser();
    model = await startDraftModel();
  });
  afterAll(async () => {
    for (const run of runs) run.child.kill("SIGKILL");
    await browser?.close();
    await model?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const label = async (...args: string[]): Promise<LabelRun> => {
    const child = spawn(process.execPath, [CLI, "judge", "label", "report.json", "--labels", "labels.yaml", ...args], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    const exited = new Promise<number>((resolve) => child.on("exit", (code) => resolve(code ?? -1)));
    const url = await new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        const match = /^open (http:\/\/\S+)$/m.exec(out);
        if (match?.[1]) {
          clearInterval(poll);
          resolve(match[1]);
        }
      }, 50);
      exited.then((code) => {
        clearInterval(poll);
        reject(new Error(`judge label exited ${code}: ${err}`));
      });
    });
    const run = { url, child, exited, stdout: () => out };
    runs.push(run);
    return run;
  };
  const stop = async (run: LabelRun) => {
    run.child.kill("SIGINT");
    return run.exited;
  };
  const fileLabels = async (): Promise<FileLabel[]> =>
    (parse(await readFile(path.join(dir, "labels.yaml"), "utf8")) as { items: FileLabel[] }).items;

  /** Every response body the page received, every request it made, and every dialog and CSP complaint. */
  const watch = (page: Page) => {
    const seen = { bodies: [] as string[], requests: [] as string[], dialogs: [] as string[], console: [] as string[] };
    page.on("request", (request) => seen.requests.push(request.url()));
    page.on("response", async (response) => {
      seen.bodies.push(await response.text().catch(() => ""));
    });
    page.on("dialog", async (dialog) => {
      seen.dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    page.on("console", (message) => seen.console.push(message.text()));
    return seen;
  };
  const progress = (page: Page, text: string) =>
    page.waitForFunction((want) => document.getElementById("progress")?.textContent === want, {}, text);

  /** The answers given, by the item's first transcript line. */
  const given = new Map<string, string>();
  const answerByKey = async (page: Page, key: "p" | "f", position: number) => {
    const first = await page.$eval("#transcript li .text", (el) => el.textContent ?? "");
    await page.keyboard.press(key);
    given.set(first, key === "p" ? "pass" : "fail");
    await progress(page, `${position + 1} of 6`);
  };

  it("before an answer, the page and all its requests hold no trace of the judge's verdict; every line is attributed", async () => {
    const run = await label("--labeller", "ann", "--sample", "6");
    expect(run.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{32}$/);
    const page = await browser.newPage();
    const seen = watch(page);
    await page.goto(run.url);
    await progress(page, "1 of 6");
    await page.waitForFunction(() => (document.getElementById("transcript")?.children.length ?? 0) === 4);
    const html = await page.content();
    for (const text of [html, ...seen.bodies]) {
      expect(text).not.toContain(REASON_MARK);
      expect(text).not.toContain(JUDGE_MODEL);
      expect(text).not.toMatch(/"(judge|verdict)"/);
    }
    expect(seen.bodies.length).toBeGreaterThanOrEqual(3); // the page, /api/state, /api/item
    // docs/labelling.png: the page as a labeller first sees it (AGENT_IAC_DOCS_SCREENSHOT=1 renews it).
    if (process.env.AGENT_IAC_DOCS_SCREENSHOT) {
      await page.setViewport({ width: 1280, height: 760 });
      await page.screenshot({ path: path.join(projectRoot, "docs", "labelling.png"), type: "png" });
    }
    // At 1280 px nothing runs off the side.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
    // Nothing from the network: every request went to the page's own origin.
    const origin = new URL(run.url).origin;
    expect(seen.requests.every((url) => url.startsWith(`${origin}/`))).toBe(true);
    // Every line is attributed as in the report.
    const who = await page.$$eval("#transcript .who", (els) => els.map((el) => el.textContent));
    expect(who).toEqual(["agent", "caller", "tool", "agent"]);
    expect(await page.$eval("#tools", (el) => el.textContent)).toContain("lookup_order");
    expect(await page.$eval("#procedures", (el) => el.textContent)).toContain("refunded");
    // Which of the six the hostile line is on (the page shows it in the last test).
    const hostile = await page.evaluate(async (token) => {
      for (let i = 0; i < 6; i++) {
        const item = await (await fetch(`/api/item?i=${i}`, { headers: { "x-label-token": token } })).json();
        if (item.lines[0].text.includes("<img")) return i;
      }
      return -1;
    }, new URL(run.url).searchParams.get("token") ?? "");
    expect(hostile).toBeGreaterThanOrEqual(0);
    for (const text of seen.bodies) expect(text).not.toContain(REASON_MARK);
    await page.close();
    hostileIndex = hostile;
  });

  it("labels 3 items with the keyboard alone, the browser closed, Ctrl+C exits 130 with the 3 on disk", async () => {
    const run = runs[0] as LabelRun;
    const page = await browser.newPage();
    const seen = watch(page);
    await page.goto(run.url);
    await progress(page, "1 of 6");
    await answerByKey(page, "p", 1);
    // The note, by keyboard: n focuses it, Esc leaves it.
    await page.keyboard.press("n");
    await page.keyboard.type("not sure about the greeting");
    await page.keyboard.press("Escape");
    await answerByKey(page, "f", 2);
    // The answer's reply (after it was saved) is the first to say the judge's verdict.
    expect(await page.$eval("#status", (el) => el.textContent)).toMatch(
      /^Saved item 2: fail\. The judge said (pass|fail)\.$/,
    );
    await answerByKey(page, "p", 3);
    expect(seen.dialogs).toEqual([]);
    expect(seen.console.filter((m) => /Content Security Policy/i.test(m))).toEqual([]);
    await browser.pages().then((pages) => Promise.all(pages.map((p) => p.close())));
    expect(await stop(run)).toBe(130);
    expect(run.stdout()).toContain("stopped (SIGINT); 3 answer(s) this run, in labels.yaml");
    const labels = await fileLabels();
    expect(labels).toHaveLength(3);
    expect(labels.map((l) => l.labeller)).toEqual(["ann", "ann", "ann"]);
    expect(labels.map((l) => l.human)).toEqual(["pass", "fail", "pass"]);
    expect((labels[1] as { note?: string }).note).toBe("not sure about the greeting");
    for (const l of labels) expect(["pass", "fail"]).toContain(l.judge.verdict);
  });

  it("a second run resumes at 4 of 6; back shows the answer given; the file then holds 6 labels judge check reads", async () => {
    const run = await label("--labeller", "ann", "--sample", "6");
    const page = await browser.newPage();
    const seen = watch(page);
    await page.goto(run.url);
    await progress(page, "4 of 6");
    // Back (b) to item 3: its answer is pressed.
    await page.keyboard.press("b");
    await progress(page, "3 of 6");
    expect(await page.$eval('[data-answer="pass"]', (el) => el.getAttribute("aria-pressed"))).toBe("true");
    await answerByKey(page, "p", 3);
    await answerByKey(page, "f", 4);
    await answerByKey(page, "p", 5);
    const last = await page.$eval("#transcript li .text", (el) => el.textContent ?? "");
    await page.keyboard.press("f");
    given.set(last, "fail");
    await page.waitForFunction(() =>
      document.getElementById("status")?.textContent?.includes("All 6 items are labelled"),
    );
    expect(seen.dialogs).toEqual([]);
    await page.close();
    expect(await stop(run)).toBe(130);
    const labels = await fileLabels();
    expect(labels).toHaveLength(6);
    expect(new Set(labels.map((l) => l.transcript[0])).size).toBe(6);
    const check = await runCli(["judge", "check", "labels.yaml", "--no-judge-cache"], {
      cwd: dir,
      env: {
        ...process.env,
        AGENT_IAC_JUDGE_BASE_URL: model.url,
        AGENT_IAC_JUDGE_MODEL: JUDGE_MODEL,
        AGENT_IAC_JUDGE_CACHE_KEY: "label-e2e-key",
      },
    });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(`judge ${JUDGE_MODEL}: 6 labelled transcript(s)`);
    expect(check.stdout).toMatch(/overall: agreement [\d.]+ \(\d\/6\)/);
    expect(check.stdout).not.toContain("stale");
  });

  it("shows the hostile line as text and runs nothing; works at 375 px", async () => {
    const run = await label("--labeller", "ann", "--sample", "6");
    const page = await browser.newPage();
    const seen = watch(page);
    await page.setViewport({ width: 375, height: 800 });
    await page.goto(run.url);
    // Every item is answered: the page opens on the first, and each answer (the one given before) steps on.
    await page.waitForFunction(() => document.getElementById("status")?.textContent?.includes("All 6 items"));
    const hostile = hostileIndex;
    // Answer items in order from the first until the hostile one is on the page (answers replace ann's own).
    for (let i = 0; i < hostile; i++) {
      const answer = given.get(await page.$eval("#transcript li .text", (el) => el.textContent ?? "")) ?? "pass";
      await page.keyboard.press(answer === "pass" ? "p" : "f");
      await page.waitForFunction(
        (n) => document.getElementById("progress")?.textContent?.startsWith(`${n} of`),
        {},
        i + 2,
      );
    }
    expect(await page.$eval("#transcript li .text", (el) => el.textContent)).toBe(HOSTILE);
    expect(await page.$$("#transcript img")).toHaveLength(0);
    expect(seen.dialogs).toEqual([]);
    // At a phone's width nothing runs off the side, and the buttons are on screen, named for a screen reader.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    for (const name of ["pass", "fail", "skip"]) {
      const box = await (await page.$(`[data-answer="${name}"]`))?.boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
    }
    const names = await page.$$eval('[role="group"] button', (els) =>
      els.map((el) => `${el.textContent?.trim()} [${el.getAttribute("aria-keyshortcuts")}]`),
    );
    expect(names).toEqual(["Pass p [p]", "Fail f [f]", "Skip s [s]", "Back b [b]"]);
    await page.close();
    expect(await stop(run)).toBe(130);
    expect(await fileLabels()).toHaveLength(6);
  });

  it("refuses a request without the token, from another Origin or for another Host (403), and listens on loopback only", async () => {
    const run = await label("--labeller", "bob", "--sample", "6");
    const url = new URL(run.url);
    const token = url.searchParams.get("token") as string;
    const bare = `${url.origin}/api/state`;
    expect((await fetch(`${url.origin}/`)).status).toBe(403);
    expect((await fetch(bare)).status).toBe(403);
    expect((await fetch(bare, { headers: { "x-label-token": "x".repeat(32) } })).status).toBe(403);
    expect((await fetch(bare, { headers: { "x-label-token": token, origin: "http://evil.example" } })).status).toBe(
      403,
    );
    expect((await fetch(bare, { headers: { "x-label-token": token, origin: url.origin } })).status).toBe(200);
    const answer = (body: unknown, origin = url.origin) =>
      fetch(`${url.origin}/api/answer`, {
        method: "POST",
        headers: { "x-label-token": token, origin, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await answer({ i: 0, human: "pass" }, "http://evil.example")).status).toBe(403);
    // A page of another name that resolves here (DNS rebinding) sends its own Host: refused.
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = http.get(
        {
          host: "127.0.0.1",
          port: Number(url.port),
          path: `/?token=${token}`,
          headers: { host: `evil.example:${url.port}` },
        },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on("error", reject);
    });
    expect(rebound).toBe(403);
    // Another machine's address for this machine: nothing listens there.
    const outside = Object.values(os.networkInterfaces())
      .flat()
      .find((a) => a && a.family === "IPv4" && !a.internal)?.address;
    if (outside) {
      const refused = await new Promise<string>((resolve) => {
        const socket = net.connect(Number(url.port), outside);
        socket.once("connect", () => {
          socket.destroy();
          resolve("connected");
        });
        socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? "error"));
      });
      expect(refused).toBe("ECONNREFUSED");
    }
    // Bob answers the first item against ann's answer: two labellers on one file keep both.
    const first = (await (
      await fetch(`${url.origin}/api/item?i=0`, { headers: { "x-label-token": token } })
    ).json()) as {
      lines: { text: string }[];
    };
    const annSaid = given.get(first.lines[0]?.text ?? "") ?? "pass";
    const bobSays = annSaid === "pass" ? "fail" : "pass";
    const reply = await answer({ i: 0, human: bobSays, note: "second look" });
    expect(reply.status).toBe(200);
    expect(await stop(run)).toBe(130);
    const labels = await fileLabels();
    expect(labels).toHaveLength(7);
    expect(labels.filter((l) => l.labeller === "bob")).toHaveLength(1);
    expect(labels.filter((l) => l.labeller === "ann")).toHaveLength(6);

    // --disagreements: the items where ann's answer is not the judge's, or ann and bob differ.
    const expected = labels.filter(
      (l) =>
        l.labeller === "ann" && (l.human !== l.judge.verdict || l.transcript[0] === `agent: ${first.lines[0]?.text}`),
    ).length;
    const second = await label("--labeller", "ann", "--disagreements");
    const state = (await (
      await fetch(`${new URL(second.url).origin}/api/state`, {
        headers: { "x-label-token": new URL(second.url).searchParams.get("token") as string },
      })
    ).json()) as { total: number };
    expect(state.total).toBe(expected);
    expect(second.stdout()).toContain(`${expected} item(s) of ${expected} disagreement(s)`);
    expect(await stop(second)).toBe(130);
  });
});
