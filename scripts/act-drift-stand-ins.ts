// The outside world of scripts/act-drift.sh (the drift workflow run with act): GitHub's issue
// endpoints as far as .github/scripts/drift-alert.cjs calls them through github-script's octokit,
// and the alert webhook (agents:alertWebhook) — two real HTTP servers on 127.0.0.1, port 0. It
// writes their URLs to the file named by its first argument, then keeps what happened (issues,
// comments, every request, every webhook message with its headers) in the file named by its
// second, rewritten after each request (the token it expects: ACT_DRIFT_GITHUB_TOKEN), so the shell script can check it between act runs.
// Stops on SIGTERM/SIGINT.
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

type Issue = {
  number: number;
  title: string;
  state: string;
  state_reason: string | null;
  labels: { name: string }[];
  body: string;
  comments: string[];
};

const [urlsFile, stateFile] = process.argv.slice(2);
// The token github-script sends (the run's throwaway GITHUB_TOKEN): from the environment, never an argument.
const token = process.env.ACT_DRIFT_GITHUB_TOKEN;
if (!urlsFile || !stateFile || !token) {
  console.error("usage: ACT_DRIFT_GITHUB_TOKEN=… act-drift-stand-ins.ts URLS_FILE STATE_FILE");
  process.exit(2);
}

const issues: Issue[] = [];
const requests: string[] = [];
const webhook: { headers: IncomingMessage["headers"]; body: string }[] = [];
const save = () => writeFileSync(stateFile, `${JSON.stringify({ issues, requests, webhook }, null, 2)}\n`);

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text;
}

/** The issue as GitHub's REST API answers it (the fields the script reads). */
const view = (issue: Issue) => ({ ...issue, comments: issue.comments.length, pull_request: undefined });

async function github(request: IncomingMessage, response: ServerResponse) {
  const text = await bodyOf(request);
  const answer = (status: number, json: unknown) => {
    requests.push(`${request.method} ${request.url} → ${status}`);
    save();
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
  };
  // github-script's octokit sends `authorization: token <github-token>`.
  if (request.headers.authorization !== `token ${token}`) return answer(401, { message: "Bad credentials" });
  const url = new URL(request.url ?? "/", "http://stand-in");
  const list = /^\/repos\/[^/]+\/[^/]+\/issues$/.test(url.pathname);
  const one = url.pathname.match(/^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)(\/comments)?$/);
  const json = text ? JSON.parse(text) : {};
  if (request.method === "GET" && list) {
    const state = url.searchParams.get("state") ?? "open";
    const labels = (url.searchParams.get("labels") ?? "").split(",").filter(Boolean);
    const found = issues.filter(
      (i) => (state === "all" || i.state === state) && labels.every((l) => i.labels.some((x) => x.name === l)),
    );
    return answer(200, found.map(view));
  }
  if (request.method === "POST" && list) {
    const issue: Issue = {
      number: issues.length + 1,
      title: json.title,
      state: "open",
      state_reason: null,
      labels: (json.labels ?? []).map((name: string) => ({ name })),
      body: json.body ?? "",
      comments: [],
    };
    issues.push(issue);
    return answer(201, view(issue));
  }
  const issue = one ? issues.find((i) => i.number === Number(one[1])) : undefined;
  if (!issue) return answer(404, { message: "Not Found" });
  if (request.method === "POST" && one?.[2]) {
    issue.comments.push(json.body);
    return answer(201, { id: issue.comments.length, body: json.body });
  }
  if (request.method === "PATCH" && one && !one[2]) {
    issue.state = json.state ?? issue.state;
    issue.state_reason = json.state_reason ?? issue.state_reason;
    return answer(200, view(issue));
  }
  return answer(404, { message: "Not Found" });
}

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void) {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const api = await listen((request, response) => {
  github(request, response).catch((error) => {
    response.writeHead(500).end(String(error));
  });
});
const hook = await listen(async (request, response) => {
  webhook.push({ headers: request.headers, body: await bodyOf(request) });
  save();
  response.writeHead(200).end("ok");
});
save();
writeFileSync(
  urlsFile,
  `${JSON.stringify({ github: `http://127.0.0.1:${api.port}`, webhook: `http://127.0.0.1:${hook.port}/hook` })}\n`,
);
const stop = () => {
  api.server.close();
  hook.server.close();
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
