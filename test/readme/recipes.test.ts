// `npm test` runs the docs' recipes (README.md, then docs/**/*.md) as written, in order, in a fresh
// clone: a change that breaks a documented path fails CI. See recipes.ts for the markers and order.
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/workspace/index.ts";
import { freePort, moveDevAddress, onDevPort } from "../helpers/dev-address.ts";
import { RUN_MARK } from "../helpers/leaks.ts";
import { parseRecipes, type Recipe, recipePages } from "./recipes.ts";

/** The recipes every page holds today: moving a page's text keeps them; losing one fails. */
const KNOWN_RECIPES = [
  "quick-start",
  "dev-service",
  "dev-commands",
  "pulumi-directly",
  "example-judge",
  "judged-smoke",
  "persona-caller",
  "scenarios-from-calls",
  "after-release",
  "try-variants",
  "drift-degrade-recover",
];

/** Every recipe of the project's pages, in the order they run. */
async function projectRecipes(): Promise<Recipe[]> {
  const docs = (await readdir(path.join(projectRoot, "docs"), { recursive: true }))
    .map((file) => `docs/${file.split(path.sep).join("/")}`)
    .filter((file) => file.endsWith(".md"));
  const pages = recipePages(["README.md", ...docs]);
  const texts = await Promise.all(pages.map((page) => readFile(path.join(projectRoot, page), "utf8")));
  return pages.flatMap((page, i) => parseRecipes(texts[i] ?? "", page));
}

describe("recipe markers", () => {
  it("parses ids, options, indented blocks and refuses a marker without a block", () => {
    const recipes = parseRecipes(
      [
        "<!-- recipe: serve background ready: /listening on \\d+/ -->",
        "```sh",
        "npm run service",
        "```",
        "- item:",
        "  <!-- recipe: call expect: /passed, 0 failed/ -->",
        "  ```sh",
        "  npx agent-iac smoke   # comment",
        "    --flag",
        "  ```",
      ].join("\n"),
    );
    expect(recipes.map(({ id, background, script }) => ({ id, background, script }))).toEqual([
      { id: "serve", background: true, script: "npm run service" },
      { id: "call", background: false, script: "npx agent-iac smoke   # comment\n  --flag" },
    ]);
    expect(recipes[0]?.ready?.test("listening on 8787")).toBe(true);
    expect(recipes[1]?.expect?.test("3 passed, 0 failed")).toBe(true);
    expect(() => parseRecipes("<!-- recipe: lost -->\ntext\n")).toThrow(/README\.md:1: recipe lost/);
    expect(() => parseRecipes("\n<!-- recipe: lost -->\n", "docs/x.md")).toThrow(/docs\/x\.md:2: recipe lost/);
    expect(recipes.map((r) => r.file)).toEqual(["README.md", "README.md"]);
  });

  it("moves every documented fixed address off the developer's: no recipe run by npm test names 8787 or 8788", async () => {
    const moved = (await projectRecipes()).map((recipe) => onDevPort(recipe.script, 41001, 41002));
    expect(moved.join("\n")).not.toMatch(/\b878[78]\b/);
    expect(moved.some((script) => script.includes("npm run example-judge -- --port 41002"))).toBe(true);
    expect(moved.some((script) => script.includes("http://127.0.0.1:41002/v1"))).toBe(true);
  });

  it("runs the README's first, then docs/ page by page in path order", () => {
    expect(recipePages(["docs/smoke.md", "docs/ci/x.md", "README.md", "docs/agent-files.md", "src/README.md"])).toEqual(
      ["README.md", "docs/agent-files.md", "docs/ci/x.md", "docs/smoke.md"],
    );
  });

  it("finds every recipe the pages held before, each once", async () => {
    const ids = (await projectRecipes()).map((r) => r.id);
    expect(ids).toEqual(expect.arrayContaining(KNOWN_RECIPES));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toBe("quick-start");
  });
});

type Outcome = { code: number; output: string };

describe("the docs' recipes, run as written in a fresh clone", () => {
  let root: string;
  let clone: string;
  let env: NodeJS.ProcessEnv;
  let recipes: Recipe[];
  /** `git status` of the clone before the recipes ran (the moved dev address shows as modified). */
  let statusBefore: string;
  const background: ChildProcess[] = [];
  const gitStatus = async () =>
    (await promisify(execFile)("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: clone })).stdout;

  const run = (script: string): Promise<Outcome> =>
    new Promise((resolve) => {
      execFile(
        "bash",
        ["-eo", "pipefail", "-c", script],
        { cwd: clone, env, maxBuffer: 32 << 20 },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? -1) : 0, output: stdout + stderr }),
      );
    });

  const startInBackground = (recipe: Recipe): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn("bash", ["-eo", "pipefail", "-c", recipe.script], {
        cwd: clone,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      background.push(child);
      let output = "";
      const timer = setTimeout(() => reject(new Error(`${recipe.id}: not ready after 60 s:\n${output}`)), 60_000);
      const onData = (chunk: Buffer) => {
        output += chunk;
        if (!recipe.ready || recipe.ready.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`${recipe.id} (${recipe.file}:${recipe.line}) ended early with ${code}:\n${output}`));
      });
    });

  beforeAll(async () => {
    recipes = await projectRecipes();
    root = await mkdtemp(path.join(os.tmpdir(), "agent-iac-readme-"));
    clone = path.join(root, "agent-iac");
    await promisify(execFile)("git", ["clone", "--quiet", projectRoot, clone]);
    // Not the developer's 127.0.0.1:8787 and 8788 (their `npm run service` and example judge may be
    // running): the clone's dev stack, the recipes' service and the example judge use free ports.
    const port = await moveDevAddress(clone);
    statusBefore = await gitStatus();
    const judgePort = await freePort();
    recipes = recipes.map((recipe) => ({ ...recipe, script: onDevPort(recipe.script, port, judgePort) }));
    // A user of their own: a fresh HOME, but the machine's package, Go and toolchain caches, so the
    // recipes run at the speed of a second run (the first-run test covers an empty cache).
    const home = path.join(root, "home");
    await mkdir(home);
    const go = JSON.parse(
      execFileSync("go", ["env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH"], { encoding: "utf8" }),
    );
    env = {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CACHE_HOME: process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"),
      npm_config_cache: path.join(os.homedir(), ".npm"),
      // The machine's own npm and TLS settings are not the user's: npm finds its global config
      // beside the Node that runs it (here node_modules' Node 24, not the machine's), so the one
      // `npm test` ran under is named, with the CA bundle a registry behind a proxy needs.
      ...machineSettings(),
      ...go,
      NO_COLOR: "1",
      CI: "true",
      [RUN_MARK]: process.env[RUN_MARK],
    };
  }, 300_000);
  afterAll(async () => {
    for (const child of background) {
      if (child.pid && child.exitCode === null) {
        try {
          process.kill(-child.pid, "SIGTERM");
        } catch {}
      }
    }
    await rm(root, { recursive: true, force: true });
  });

  it("finds the recipes the docs tell a user to run", () => {
    expect(recipes.map((r) => r.id)).toEqual(expect.arrayContaining(KNOWN_RECIPES));
  });

  it("runs every recipe in order; each succeeds and shows what its page says", async () => {
    for (const recipe of recipes) {
      if (recipe.background) {
        await startInBackground(recipe);
        continue;
      }
      const { code, output } = await run(recipe.script);
      const where = `recipe ${recipe.id} (${recipe.file}:${recipe.line}) exited ${code}:\n${headAndTail(output)}`;
      expect(code, where).toBe(0);
      if (recipe.expect) expect(output, where).toMatch(recipe.expect);
    }
    // A user runs them in their own checkout: what a recipe makes outside the ignored folders
    // (reports/, .agent-iac/) it removes again.
    expect(await gitStatus(), "files the recipes left in the checkout").toBe(statusBefore);
  }, 900_000);

  it("fails a recipe whose command is edited into a wrong one", async () => {
    const { code, output } = await run("npx agent-iac smok");
    expect(code).toBe(2);
    expect(output).toContain('unknown command "smok"');
  });
});

/** The machine-wide npm and TLS settings of this run, for a fresh user's HOME (none of them is a secret). */
function machineSettings(): Record<string, string> {
  const names = ["npm_config_globalconfig", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"];
  return Object.fromEntries(names.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])));
}

/** A failed recipe's output for the message: its start says which service it used, its end why it failed. */
function headAndTail(output: string): string {
  return output.length <= 6000 ? output : `${output.slice(0, 2000)}\n…\n${output.slice(-4000)}`;
}
