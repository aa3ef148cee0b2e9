// A pull request as the plan job sees it: the project committed as the base branch `main` and
// fetched as origin/main (GitHub's checkout with fetch-depth: 0), the pull request's change left in
// the working tree; and the plan files a run wrote.
import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Plan } from "../../src/plan/index.ts";

/** Commits `dir` as `main` (and origin/main); returns a git runner in it. */
export async function commitBase(dir: string): Promise<(...args: string[]) => string> {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" });
  git("init", "-q", "-b", "main");
  await writeFile(path.join(dir, ".gitignore"), "node_modules\nplan-*\nreports\n.agent-iac\n");
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base");
  git("remote", "add", "origin", dir);
  git("fetch", "-q", "origin", "main");
  return git;
}

/** The plan a run wrote: its Markdown ("" where none) and its JSON (the text, and parsed). */
export async function planFiles(markdownFile: string, jsonFile: string) {
  const markdown = await readFile(markdownFile, "utf8").catch(() => "");
  const jsonText = await readFile(jsonFile, "utf8").catch(() => "");
  return { markdown, jsonText, plan: jsonText ? (JSON.parse(jsonText) as Plan) : undefined };
}
