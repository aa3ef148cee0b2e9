// A GitHub stand-in for the plan comment's tests: a real HTTP server on port 0 serving the REST
// endpoints .github/scripts/plan-comment.cjs calls (list, create and update a pull request's
// comments). READ_ONLY_TOKEN gets what GitHub gives a fork's pull request: reads answer, writes are
// refused with 403 "Resource not accessible by integration". `githubClient` and `actionsCore` make
// the calls of actions/github-script's `github` (Octokit) and `core` over that server and a summary
// file, and `runCommentStep` runs the script as that step does: it fails when the script throws.

import { appendFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { projectRoot } from "../../src/workspace/index.ts";

export type GitHubComment = { id: number; body: string; user: { type: string } };

export const READ_WRITE_TOKEN = "stand-in-read-write-token";
export const READ_ONLY_TOKEN = "stand-in-read-only-token";

export type GitHubStandIn = {
  url: string;
  comments: GitHubComment[];
  /** "METHOD path → status", in order. */
  requests: string[];
  close(): Promise<void>;
};

async function readBody(request: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text;
}

/** The stand-in, holding `comments` (changed by the writes it accepts). */
export async function githubStandIn(comments: GitHubComment[] = []): Promise<GitHubStandIn> {
  const requests: string[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    const answer = (status: number, json: unknown) => {
      requests.push(`${request.method} ${request.url} → ${status}`);
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
    };
    const token = request.headers.authorization?.replace(/^(token|bearer) /i, "");
    if (token !== READ_WRITE_TOKEN && token !== READ_ONLY_TOKEN) {
      return answer(401, { message: "Bad credentials", status: "401" });
    }
    const list = request.url?.match(/^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/comments(\?.*)?$/);
    const one = request.url?.match(/^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/);
    if (request.method === "GET" && list) return answer(200, comments);
    if ((request.method === "POST" && list) || (request.method === "PATCH" && one)) {
      if (token === READ_ONLY_TOKEN) {
        // What GitHub answers a fork's pull request's token, whatever `permissions:` asked for.
        return answer(403, {
          message: "Resource not accessible by integration",
          documentation_url: "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
          status: "403",
        });
      }
      const { body: text } = JSON.parse(body) as { body: string };
      const comment = one ? comments.find((c) => c.id === Number(one[1])) : undefined;
      if (one && !comment) return answer(404, { message: "Not Found", status: "404" });
      if (comment) comment.body = text;
      else comments.push({ id: comments.length + 100, body: text, user: { type: "Bot" } });
      return answer(one ? 200 : 201, comment ?? comments.at(-1));
    }
    return answer(404, { message: "Not Found", status: "404" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    comments,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type Params = { owner: string; repo: string; issue_number?: number; comment_id?: number; body?: string };

/**
 * The calls the script makes, in the shape of github-script's Octokit (`rest.issues.*`, `paginate`),
 * over HTTP. A non-2xx answer throws with its `status` and GitHub's `message`, as Octokit's
 * RequestError does.
 */
export function githubClient(url: string, token: string) {
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${url}${route}`, {
      method,
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as { message?: string };
    if (!response.ok) throw Object.assign(new Error(json.message), { status: response.status });
    return json;
  };
  const comments = (p: Params) => `/repos/${p.owner}/${p.repo}/issues/${p.issue_number}/comments`;
  return {
    paginate: (list: (p: Params) => Promise<unknown>, params: Params) => list(params),
    rest: {
      issues: {
        listComments: (p: Params) => call("GET", comments(p)),
        createComment: (p: Params) => call("POST", comments(p), { body: p.body }),
        updateComment: (p: Params) =>
          call("PATCH", `/repos/${p.owner}/${p.repo}/issues/comments/${p.comment_id}`, { body: p.body }),
      },
    },
  };
}

/** github-script's `core`, as far as the script uses it: the job summary (a file) and warnings. */
export function actionsCore(summaryFile: string) {
  const warnings: string[] = [];
  let pending = "";
  const summary = {
    addRaw(text: string) {
      pending += text;
      return summary;
    },
    async write() {
      await appendFile(summaryFile, pending);
      pending = "";
      return summary;
    },
  };
  return { warnings, summary, warning: (message: string) => warnings.push(message) };
}

/** The pull request's context as github-script gives it (a fork's head when `fork`). */
export const pullRequestContext = (fork: boolean) => ({
  repo: { owner: "team", repo: "agents" },
  issue: { number: 7 },
  payload: { pull_request: { head: { sha: "fedcba9876543210", repo: { fork } } } },
  sha: "merge",
  serverUrl: "https://github.example",
  runId: 42,
});

const script = createRequire(import.meta.url)(path.join(projectRoot, ".github", "scripts", "plan-comment.cjs")) as {
  postPlanComment(options: unknown): Promise<void>;
};

/**
 * The workflow's comment step (.github/workflows/agents.yml) as github-script runs it: the step
 * fails when the script throws, and only then.
 */
export async function runCommentStep(options: {
  github: ReturnType<typeof githubClient>;
  core: ReturnType<typeof actionsCore>;
  env: Record<string, string>;
  dir: string;
  fork?: boolean;
}): Promise<{ failed: boolean; error?: unknown }> {
  try {
    await script.postPlanComment({ ...options, context: pullRequestContext(options.fork ?? false) });
    return { failed: false };
  } catch (error) {
    return { failed: true, error };
  }
}
