// The layering of src/ (docs/architecture.md, "The layers") is a lint check, not a convention:
// dependency-cruiser, with the project's config, fails a tree that imports upward or a command that
// reaches past the use cases, and passes the project's own tree.
import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectRoot } from "../../src/workspace/index.ts";

const depcruise = path.join(projectRoot, "node_modules", "dependency-cruiser", "bin", "dependency-cruiser.mjs");

/** The check as `npm run lint` runs it, in `dir`: its exit code and what it printed. */
async function check(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [depcruise, "src", "--config", ".dependency-cruiser.cjs"],
      {
        cwd: dir,
      },
    );
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: Number(failed.code ?? -1), output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

describe("the layering check", () => {
  let tree: string;
  beforeAll(async () => {
    tree = await mkdtemp(path.join(os.tmpdir(), "agent-iac-layers-"));
    for (const entry of ["src", "docs", ".dependency-cruiser.cjs", "tsconfig.json", "package.json"]) {
      await cp(path.join(projectRoot, entry), path.join(tree, entry), { recursive: true });
    }
  });
  afterAll(() => rm(tree, { recursive: true, force: true }));

  it("passes the project's own tree", async () => {
    const { code, output } = await check(projectRoot);
    expect(output).not.toMatch(/error /);
    expect(code).toBe(0);
  });

  it("fails a planted upward import and a command that reaches past the use cases, naming each rule", async () => {
    await writeFile(
      path.join(tree, "src", "contract", "planted.ts"),
      'import { smokeStack } from "../usecases/index.ts";\nexport const planted = smokeStack;\n',
    );
    await writeFile(
      path.join(tree, "src", "commands", "planted.ts"),
      'import { planSmoke } from "../smoke/index.ts";\nexport const planted = planSmoke;\n',
    );
    const { code, output } = await check(tree);
    expect(code).not.toBe(0);
    expect(output).toMatch(/layer-1-imports-upward: src\/contract\/planted\.ts → src\/usecases\/index\.ts/);
    expect(output).toMatch(/commands-import-only-the-floor: src\/commands\/planted\.ts → src\/smoke\/index\.ts/);
  });

  it("fails a command, the command runtime included, that imports a value of src/api (a type passes)", async () => {
    await writeFile(
      path.join(tree, "src", "commands", "lifecycle-planted.ts"),
      'import type { Client } from "../api/index.ts";\nexport type Planted = Client;\n',
    );
    await writeFile(
      path.join(tree, "src", "commands", "lifecycle.ts"),
      `${await readFile(path.join(projectRoot, "src", "commands", "lifecycle.ts"), "utf8")}\nimport { createClient } from "../api/index.ts";\nexport const planted = createClient;\n`,
    );
    const { code, output } = await check(tree);
    expect(code).not.toBe(0);
    expect(output).toMatch(/commands-get-no-api-client: src\/commands\/lifecycle\.ts → src\/api\/index\.ts/);
    // The runtime's own rule no longer lets it read api either.
    expect(output).toMatch(/command-runtime-stays-light: src\/commands\/lifecycle\.ts → src\/api\/index\.ts/);
    expect(output).not.toMatch(/lifecycle-planted\.ts/);
    await cp(
      path.join(projectRoot, "src", "commands", "lifecycle.ts"),
      path.join(tree, "src", "commands", "lifecycle.ts"),
    );
    await rm(path.join(tree, "src", "commands", "lifecycle-planted.ts"));
  });

  it("fails the use-case floor re-exporting a domain folder's value (a type passes)", async () => {
    const floor = path.join(tree, "src", "usecases", "index.ts");
    const own = await readFile(path.join(projectRoot, "src", "usecases", "index.ts"), "utf8");
    await writeFile(
      floor,
      `${own}export { parseShard } from "../smoke/index.ts";\nexport type { Shard } from "../smoke/index.ts";\n`,
    );
    const { code, output } = await check(tree);
    expect(code).not.toBe(0);
    expect(output).toMatch(/usecases-floor-exports-its-own: src\/usecases\/index\.ts → src\/smoke\/index\.ts/);
    // The type alone passes.
    await writeFile(floor, `${own}export type { Shard } from "../smoke/index.ts";\n`);
    const typeOnly = await check(tree);
    expect(typeOnly.output).not.toMatch(/usecases-floor-exports-its-own/);
    await writeFile(floor, own);
  });

  it("fails a judge, caller or drafts module that sends a request itself instead of through the model port", async () => {
    await writeFile(
      path.join(tree, "src", "caller", "planted.ts"),
      'import { RequestCore } from "../api/index.ts";\nexport const planted = RequestCore;\n',
    );
    const { code, output } = await check(tree);
    expect(code).not.toBe(0);
    expect(output).toMatch(/model-requests-through-the-port: src\/caller\/planted\.ts → src\/api\/index\.ts/);
  });

  it("fails a producer that imports the renderers: it builds its value from src/results, below it", async () => {
    await writeFile(
      path.join(tree, "src", "smoke", "planted-render.ts"),
      'import { reportJson } from "../report/index.ts";\nexport const planted = reportJson;\n',
    );
    const { code, output } = await check(tree);
    expect(code).not.toBe(0);
    expect(output).toMatch(/layer-8-imports-upward: src\/smoke\/planted-render\.ts → src\/report\/index\.ts/);
  });

  it("fails a folder the page's list of layers does not name", async () => {
    await cp(path.join(tree, "src", "stats"), path.join(tree, "src", "unlisted"), { recursive: true });
    await writeFile(
      path.join(tree, "src", "unlisted", "x.ts"),
      'import { ERROR_CODES } from "../errors/index.ts";\nexport const x = ERROR_CODES;\n',
    );
    const { code, output } = await check(tree);
    expect(code).not.toBe(0);
    expect(output).toMatch(/folder-not-in-the-layers: src\/unlisted\/x\.ts/);
  });
});
