// The repository settings docs/threat-model.md relies on (issue 49): the CODEOWNERS example owns
// every file whose code the deploy runs with its credentials, and the page closes the doors a
// branch's workflow could open (joining the deploy's concurrency group, approving its own PR).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFile(path.join(root, file), "utf8");

/** Whether a CODEOWNERS pattern (anchored with a leading /, as the example writes them) owns `file`. */
function owns(pattern: string, file: string): boolean {
  const glob = pattern.replace(/^\//, "");
  if (glob.endsWith("/")) return owns(`${pattern}**`, file);
  const regex = glob
    .split("**")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*"))
    .join(".*");
  return new RegExp(`^${regex}$`).test(file);
}

/** What npm and Node read at start in a checkout, before any of agent-iac's code runs (issue 59). */
const START_FILES = [".npmrc", ".nvmrc", ".node-version", "package.json", "package-lock.json"];

describe("the threat model's repository settings", () => {
  it("the CODEOWNERS example owns the code the deploy runs with its credentials", async () => {
    const patterns = (await read(".github/CODEOWNERS"))
      .split("\n")
      .filter((l) => l.trim() && !l.startsWith("#"))
      .map((l) => l.split(/\s+/)[0] ?? "");
    const bin = Object.values((JSON.parse(await read("package.json")) as { bin: Record<string, string> }).bin);
    const deployRuns = [
      ...bin, // npx agent-iac
      "src/cli.ts",
      "src/settings/guarded.ts",
      "scripts/ensure-pulumi", // run by the CLI before every Pulumi command
      "Pulumi.yaml",
      "Pulumi.prod.yaml",
      // Pulumi's other extensions, and a stack file where stackConfigDir puts it (issue 59).
      "Pulumi.json",
      "Pulumi.prod.yml",
      "Pulumi.prod.json",
      "config/Pulumi.prod.yaml",
      // Read by npm or Node at start, before agent-iac's code: `.npmrc`'s node-options runs code under `npx agent-iac`.
      ...START_FILES,
      "agents/.npmrc",
      "package-lock.json",
      "policy/index.ts",
      "policy-config/prod.json",
      ".github/workflows/agents.yml",
      "judge-labels.yaml",
    ];
    expect(deployRuns.filter((file) => !patterns.some((p) => owns(p, file)))).toEqual([]);
    // The matcher itself: a file outside every pattern is not owned.
    expect(patterns.some((p) => owns(p, "agents/support.yaml"))).toBe(false);
  });

  it("names each file npm and Node read at start, and why an .npmrc is code", async () => {
    const doc = await read("docs/threat-model.md");
    for (const file of START_FILES) expect(doc, file).toContain(`\`${file}\``);
    expect(doc).toContain("node-options=--require");
    expect(doc).toContain("stackConfigDir");
  });

  it("names the settings that close the doors a branch's workflow opens", async () => {
    const doc = await read("docs/threat-model.md");
    const workflow = parse(await read(".github/workflows/agents.yml")) as {
      jobs: Record<string, { concurrency?: { group: string } }>;
    };
    // The deploy's concurrency group, as the workflow names it for prod.
    const group = workflow.jobs.deploy?.concurrency?.group.replace(/\$\{\{\s*matrix\.stack\s*\}\}/, "prod");
    expect(group).toBe("agents-deploy-prod");
    expect(doc).toContain(`\`${group}\` with\n   \`cancel-in-progress: true\``);
    expect(doc).toContain('"Allow GitHub Actions to create and approve pull requests" off');
    expect(doc).toMatch(/plan job's\s+`pull-requests: write` token/);
  });
});
