// The drift workflow's alert (.github/scripts/drift-alert.cjs) against a GitHub stand-in (a real
// HTTP server on port 0 serving the issue endpoints it calls) and a webhook receiver (another):
// a drifted run opens one issue, a second drifted run comments on it (no second issue), a holding
// run closes it; inconclusive opens nothing and notes it; the webhook gets one message per change
// of state, with no key and no transcript; another stack's issue is left alone.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../src/workspace/index.ts";
import { actionsCore } from "./helpers/github.ts";

type Issue = {
  number: number;
  title: string;
  state: string;
  labels: { name: string }[];
  comments: string[];
  body: string;
};

const TOKEN = "stand-in-issues-token";
const script = createRequire(import.meta.url)(path.join(projectRoot, ".github", "scripts", "drift-alert.cjs")) as {
  driftAlert(options: unknown): Promise<string>;
};

async function body(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text;
}

/** GitHub's issue endpoints, as far as the script uses them. */
async function issuesStandIn(issues: Issue[]) {
  const requests: string[] = [];
  const server = createServer(async (request, response) => {
    const text = await body(request);
    const answer = (status: number, json: unknown) => {
      requests.push(`${request.method} ${request.url} → ${status}`);
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    };
    if (request.headers.authorization !== `token ${TOKEN}`) return answer(401, { message: "Bad credentials" });
    const url = new URL(request.url ?? "/", "http://stand-in");
    const list = url.pathname === "/repos/team/agents/issues";
    const one = url.pathname.match(/^\/repos\/team\/agents\/issues\/(\d+)(\/comments)?$/);
    if (request.method === "GET" && list) {
      const label = url.searchParams.get("labels");
      const state = url.searchParams.get("state");
      return answer(
        200,
        issues.filter((i) => i.state === state && i.labels.some((l) => l.name === label)),
      );
    }
    const json = text ? JSON.parse(text) : {};
    if (request.method === "POST" && list) {
      const issue = {
        number: issues.length + 1,
        title: json.title,
        state: "open",
        labels: json.labels.map((name: string) => ({ name })),
        comments: [],
        body: json.body,
      };
      issues.push(issue);
      return answer(201, issue);
    }
    const issue = one ? issues.find((i) => i.number === Number(one[1])) : undefined;
    if (!issue) return answer(404, { message: "Not Found" });
    if (request.method === "POST" && one?.[2]) {
      issue.comments.push(json.body);
      return answer(201, { id: issue.comments.length });
    }
    if (request.method === "PATCH" && one && !one[2]) {
      issue.state = json.state ?? issue.state;
      return answer(200, issue);
    }
    return answer(404, { message: "Not Found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A webhook receiver: every POST body, answered 200. */
async function webhookReceiver() {
  const received: { headers: IncomingMessage["headers"]; body: string }[] = [];
  const server = createServer(async (request, response) => {
    received.push({ headers: request.headers, body: await body(request) });
    response.writeHead(200).end("ok");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** github-script's `github` over the stand-in (the calls the script makes). */
function github(url: string) {
  const call = async (method: string, route: string, payload?: unknown) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `token ${TOKEN}`, "content-type": "application/json" },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
    const json = await response.json();
    if (!response.ok) throw Object.assign(new Error(json.message), { status: response.status });
    return json;
  };
  type P = { owner: string; repo: string; issue_number?: number; [key: string]: unknown };
  const root = (p: P) => `/repos/${p.owner}/${p.repo}/issues`;
  return {
    paginate: (list: (p: P) => Promise<unknown>, params: P) => list(params),
    rest: {
      issues: {
        listForRepo: (p: P) => call("GET", `${root(p)}?state=${p.state}&labels=${p.labels}`),
        create: (p: P) => call("POST", root(p), { title: p.title, labels: p.labels, body: p.body }),
        createComment: (p: P) => call("POST", `${root(p)}/${p.issue_number}/comments`, { body: p.body }),
        update: (p: P) =>
          call("PATCH", `${root(p)}/${p.issue_number}`, { state: p.state, state_reason: p.state_reason }),
      },
    },
  };
}

/** github-script's `core`: the helper's summary and warnings, and the step's failure. */
function core(summaryFile: string) {
  const failures: string[] = [];
  return { ...actionsCore(summaryFile), failures, setFailed: (m: string) => failures.push(m) };
}

const context = { repo: { owner: "team", repo: "agents" }, serverUrl: "https://github.example", runId: 99 };

/** A drift report of stack prod with one scenario of this verdict (its transcript holds a secret-looking line). */
function report(verdict: string) {
  return {
    format: "agent-iac-report",
    kind: "drift",
    stack: "prod",
    interrupted: false,
    results: [{ transcript: ["agent: your code is 4417-SECRET"], entries: [] }],
    drift: {
      scenarios: [
        {
          agent: "booking",
          scenario: "books",
          version_id: "ca_1@v2",
          verdict,
          baseline: { calls: 40, passes: 40 },
          now: { calls: 8, passes: verdict === "drifted" ? 3 : 8 },
          calls_used: 8,
          moved: [],
        },
      ],
    },
  };
}

describe("drift-alert.cjs", () => {
  let dir: string;
  let gh: Awaited<ReturnType<typeof issuesStandIn>>;
  let hook: Awaited<ReturnType<typeof webhookReceiver>>;
  const issues: Issue[] = [
    // Another stack's open drift issue: never touched by prod's runs.
    {
      number: 1,
      title: "Agent drift: stack staging",
      state: "open",
      labels: [{ name: "agent-drift" }],
      comments: [],
      body: "",
    },
  ];
  const run = async (verdict: string | undefined) => {
    const file = path.join(dir, "drift.json");
    if (verdict) await writeFile(file, JSON.stringify(report(verdict)));
    else await rm(file, { force: true });
    const summaryFile = path.join(dir, "summary.md");
    await rm(summaryFile, { force: true });
    const fake = core(summaryFile);
    const state = await script.driftAlert({
      github: github(gh.url),
      context,
      core: fake,
      env: { STACK: "prod", REPORT: file, ALERT_WEBHOOK: hook.url },
    });
    return { state, core: fake, summary: await readFile(summaryFile, "utf8") };
  };
  const prodIssues = () => issues.filter((i) => i.title === "Agent drift: stack prod");

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "drift-alert-"));
    gh = await issuesStandIn(issues);
    hook = await webhookReceiver();
  });
  afterAll(async () => {
    await gh?.close();
    await hook?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("drifted opens one issue and sends one message; a second drifted run comments, sends nothing, opens no second", async () => {
    const first = await run("drifted");
    expect(first.state).toBe("drifted");
    expect(prodIssues()).toHaveLength(1);
    expect(prodIssues()[0]).toMatchObject({ state: "open", labels: [{ name: "agent-drift" }] });
    expect(prodIssues()[0]?.body).toContain("booking/books on ca_1@v2: drifted (baseline 40/40, now 3/8, 8 calls)");
    expect(first.core.failures).toEqual(["stack prod: drifted"]);
    expect(hook.received).toHaveLength(1);
    const message = JSON.parse(hook.received[0]?.body ?? "{}");
    expect(Object.keys(message)).toEqual(["text"]);
    expect(message.text).toContain("agent-iac drift: stack prod is drifted");
    expect(hook.received[0]?.headers["content-type"]).toBe("application/json");
    // No transcript, no key, no token reaches the webhook.
    expect(hook.received[0]?.body).not.toMatch(/SECRET|4417|stand-in-issues-token/);
    const second = await run("drifted");
    expect(second.state).toBe("drifted");
    expect(prodIssues()).toHaveLength(1);
    expect(prodIssues()[0]?.comments).toHaveLength(1);
    expect(hook.received).toHaveLength(1);
  });

  it("inconclusive notes it in the summary and opens, closes and sends nothing", async () => {
    const before = gh.requests.length;
    const result = await run("inconclusive");
    expect(result.state).toBe("inconclusive");
    expect(result.summary).toContain("Inconclusive: no issue was opened");
    expect(result.core.failures).toEqual([]);
    expect(gh.requests.slice(before)).toEqual([]);
    expect(prodIssues()[0]?.state).toBe("open");
    expect(hook.received).toHaveLength(1);
  });

  it("holding closes the open issue with a comment and sends one message; staging's issue is left open", async () => {
    const result = await run("holding");
    expect(result.state).toBe("holding");
    expect(prodIssues()[0]?.state).toBe("closed");
    expect(prodIssues()[0]?.comments.at(-1)).toContain("Holding again: closing.");
    expect(hook.received).toHaveLength(2);
    expect(JSON.parse(hook.received[1]?.body ?? "{}").text).toContain("stack prod is holding");
    expect(issues.find((i) => i.number === 1)).toMatchObject({ state: "open", comments: [] });
    // Holding again with nothing open: no request but the lookup, no message.
    await run("holding");
    expect(hook.received).toHaveLength(2);
    expect(prodIssues()).toHaveLength(1);
  });

  it("a call that could not complete (drift's exit 3) fails the step with a note, never a green inconclusive", async () => {
    const before = gh.requests.length;
    const result = await run("error");
    expect(result.state).toBe("error");
    expect(result.core.failures).toEqual(["stack prod: error"]);
    expect(result.summary).toContain("A call could not complete");
    expect(result.summary).not.toContain("Inconclusive");
    expect(gh.requests.slice(before)).toEqual([]);
    expect(hook.received).toHaveLength(2);
  });

  it("no report (drift refused or failed) fails the step with a note and touches no issue", async () => {
    const before = gh.requests.length;
    const result = await run(undefined);
    expect(result.state).toBe("error");
    expect(result.core.failures).toEqual(["stack prod: error"]);
    expect(result.summary).toContain("No drift report");
    expect(gh.requests.slice(before)).toEqual([]);
  });
});
