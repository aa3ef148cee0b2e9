// What a provider process loads. Every `pulumi preview` and `up` starts one, and at 1,000 agents
// its module loading was a measurable share of a one-agent change (README "Where the time goes"):
// check and diff of unchanged agents must load no schema, no client and no report code, and a
// create the client but no report code. Run in a fresh Node process that records every module.
import { spawn } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../src/workspace/index.ts";

const url = (file: string) => pathToFileURL(path.join(projectRoot, file)).href;

const script = `
import { registerHooks } from "node:module";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const { handle } = await import(${JSON.stringify(url("src/provider/runtime.ts"))});
const { bodyDigests } = await import(${JSON.stringify(url("src/provider/body.ts"))});
const body = {
  name: "Support line",
  description: "Answers calls.",
  config: { runtime: { model: "openai/gpt-4o", prompt: { type: "fixed", text: "Be kind." } } },
  postprocess_agents: ["pa_1"],
};
await handle("conversational", [{ config: { get: () => undefined } }]);
const checked = await handle("conversational", [body, { ...body }]);
const diffed = await handle("conversational", [
  "ca_1",
  { agentId: "ca_1", versionId: "ca_1@v1", digests: bodyDigests("conversational", body) },
  { ...body },
]);
const preview = [...loaded];
await import(${JSON.stringify(url("src/provider/create.ts"))});
process.stdout.write(JSON.stringify({ checked, diffed, preview, create: loaded.slice(preview.length) }));
`;

function run(): Promise<{ checked: unknown; diffed: unknown; preview: string[]; create: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "--eval", script], {
      cwd: projectRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}: ${err}`))));
  });
}

const ours = (urls: string[], folder: string) => urls.filter((u) => u.startsWith(url(`src/${folder}/`)));
const packages = (urls: string[], name: string) => urls.filter((u) => u.includes(`/node_modules/${name}/`));

describe("a provider process", () => {
  it("checks and diffs unchanged agents without loading schemas, the client or report code; a create loads the client only", async () => {
    const { checked, diffed, preview, create } = await run();
    // The calls did run: an unchanged agent, no failures, no replacement.
    expect(checked).toMatchObject({ failures: [] });
    expect(diffed).toMatchObject({ changes: false, replaces: [] });
    for (const folder of ["api", "contract", "report", "results", "escape", "render", "settings"])
      expect(ours(preview, folder)).toEqual([]);
    for (const name of ["zod", "undici", "yaml"]) expect(packages(preview, name)).toEqual([]);
    expect(ours(create, "api").length).toBeGreaterThan(0);
    expect(packages(create, "undici").length).toBeGreaterThan(0);
    for (const folder of ["report", "results", "escape", "render"]) expect(ours(create, folder)).toEqual([]);
  });
});
