// `agent-iac validate` and `agent-iac schema`, run in-process through the command layer (runInProcess).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { agentJsonSchema } from "../../src/definitions/index.ts";
import { runInProcess } from "../helpers/cli.ts";
import { SUMMARY, type TempProject, tempProject } from "./helpers.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const _CLI = path.join(ROOT, "src/cli.ts");
const cli = (args: string[], cwd = ROOT) => runInProcess(args, { cwd });

let project: TempProject | undefined;
afterEach(async () => {
  await project?.cleanup();
  project = undefined;
});

describe("agent-iac validate", () => {
  it("exits 0 on the examples and says how many agents are OK", async () => {
    const result = await cli(["validate"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe("4 agents OK\n");
    const prod = await cli(["validate", "agents", "--stack", "prod"]);
    expect(prod.code).toBe(0);
    expect(prod.stdout).toMatch(
      /^4 agents OK \(overlays for stack prod: agents\/call-summary\.prod\.yaml, agents\/booking\.prod\.yaml\)\n$/,
    );
  });

  it("exits 1 with one file:line:column: field: reason line per error, paths relative to the working directory", async () => {
    project = await tempProject({
      "agents/summary.yaml": SUMMARY,
      "agents/support.yaml":
        "kind: conversational\nname: S\ndescription: d\nconfig:\n  runtime:\n    model: gpt-4o\npostprocess_agents: [nope]\n",
    });
    const result = await cli(["validate"], project.root);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr.split("\n")).toEqual([
      "agents/support.yaml:6:12: config.runtime.model: must look like <vendor>/<model name>, e.g. openai/gpt-4o",
      'agents/support.yaml:7:22: postprocess_agents[0]: unknown agent "nope" (no nope.yaml)',
      "2 errors in agents",
      "",
    ]);
  });

  it("exits 2 on usage errors, 0 on --help", async () => {
    expect((await cli(["validate", "--bogus"])).code).toBe(2);
    expect((await cli(["validate", "a", "b"])).code).toBe(2);
    const help = await cli(["validate", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: agent-iac validate/);
  });
});

describe("agent-iac schema", () => {
  it("the committed agents/agent.schema.json is the generated one (run `agent-iac schema` when this fails)", async () => {
    const committed = await readFile(path.join(ROOT, "agents/agent.schema.json"), "utf8");
    expect(committed).toBe(agentJsonSchema());
    expect((await cli(["schema", "--check"])).code).toBe(0);
  });

  it("is stable JSON with sorted keys, and describes both kinds", () => {
    const text = agentJsonSchema();
    expect(agentJsonSchema()).toBe(text);
    const schema = JSON.parse(text) as { oneOf: { properties: Record<string, unknown>; required: string[] }[] };
    expect(schema.oneOf.map((branch) => Object.keys(branch.properties))).toEqual([
      ["config", "description", "kind", "name", "postprocess_agents", "protect", "smoke", "variants"],
      ["config", "description", "kind", "name", "protect"],
    ]);
    expect(schema.oneOf[0]?.required).toEqual(["kind", "name", "description", "config"]);
    expect(text).toContain('"file"');
  });

  it("writes --out, and --check fails on a stale file", async () => {
    project = await tempProject();
    const out = path.join(project.root, "schema.json");
    expect((await cli(["schema", "--out", out])).code).toBe(0);
    expect(await readFile(out, "utf8")).toBe(agentJsonSchema());
    await project.write("schema.json", "{}\n");
    const stale = await cli(["schema", "--out", out, "--check"]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/is stale/);
    expect((await cli(["schema", "--nope"])).code).toBe(2);
  });
});
