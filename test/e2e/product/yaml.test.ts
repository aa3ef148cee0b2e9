// Agents from a Pulumi YAML program, the way a team whose programs are not TypeScript uses the
// package (docs/yaml.md): the packed package installed into a copy of examples/yaml, the YAML host
// built by `scripts/ensure-pulumi --yaml`, the installed simulator on port 0, the real CLI; then the
// documented route (the plugin folder without its launcher, run by the Node.js language host) and
// SDKs for Python, Go and .NET generated from the provider's schema.
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, copyFile, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { projectRoot } from "../../../src/workspace/index.ts";
import { type PackedProject, packedProject, packedTarball, run } from "../../helpers/packed.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";
import { type StoredAgents, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-yaml-e2e-51c0a9e7b2";

type Program = { resources: Record<string, { properties: Record<string, unknown> }> };

describe("agents from a Pulumi YAML program", { timeout: 600_000 }, () => {
  let sandbox: PulumiSandbox;
  let packed: PackedProject;
  let env: NodeJS.ProcessEnv;
  let program: string;
  const printed: string[] = [];

  const pulumi = async (...args: string[]) => {
    const result = await run("pulumi", [...args, "--non-interactive"], packed.project, env);
    printed.push(result.stdout, result.stderr);
    return result;
  };
  const stackOutputs = async () =>
    JSON.parse((await pulumi("stack", "output", "--json")).stdout) as {
      versions: Record<string, string>;
      "call-notes": string;
      "front-desk": string;
    };
  const idOf = (version: string | undefined) => version?.split("@")[0];

  beforeAll(async () => {
    sandbox = await pulumiSandbox(); // the CLI and this Node on PATH
    // The documented opt-in: the YAML language host beside the CLI (built once, then cached).
    const ensured = await run(path.join(projectRoot, "scripts", "ensure-pulumi"), ["--yaml"], projectRoot, process.env);
    expect(ensured.code, ensured.stderr).toBe(0);
    const dir = ensured.stdout.trim().split("\n").at(-1) ?? "";
    env = {
      ...process.env,
      ...sandbox.env,
      PATH: [dir, process.env.PATH].filter(Boolean).join(path.delimiter),
      AGENT_IAC_API_KEY: API_KEY,
    };
    packed = await packedProject("yaml", "yaml.md", env);
    program = path.join(packed.project, "Pulumi.yaml");
    expect((await pulumi("stack", "init", "dev")).code).toBe(0);
    expect((await pulumi("config", "set", "agents:baseUrl", packed.sim.url)).code).toBe(0);
  }, 900_000);

  afterAll(async () => {
    await packed?.cleanup();
    await sandbox?.cleanup();
  });

  it("ships the component provider: its folder, launcher and PulumiPlugin.yaml", () => {
    for (const file of [
      "pulumi-plugin/PulumiPlugin.yaml",
      "pulumi-plugin/index.js",
      "pulumi-plugin/pulumi-resource-agent-iac",
      "dist/component-provider/index.js",
      "scripts/codegen-language-host/main.go", // what `ensure-pulumi --yaml` builds for gen-sdk
    ]) {
      expect(packed.packedFiles).toContain(file);
    }
  });

  /** `pulumi preview` of the program with one edit; nothing may be created, and the program is put back. */
  const previewWith = async (edit: (good: string) => string) => {
    const good = await readFile(program, "utf8");
    const edited = edit(good);
    expect(edited).not.toBe(good);
    await writeFile(program, edited);
    try {
      const preview = await pulumi("preview");
      const stored = await storedAgents(packed.sim);
      expect([...stored.conversational, ...stored.procedural]).toEqual([]);
      return { code: preview.code, text: preview.stdout + preview.stderr };
    } finally {
      await writeFile(program, good);
    }
  };
  /** Every `error:` line of the preview's diagnostics. */
  const errorLines = (text: string) => [...new Set(text.match(/^\s*error: .*$/gm)?.map((line) => line.trim()))];

  it("fails the preview on a model without its vendor, naming the resource and the field, and creates nothing", async () => {
    const preview = await previewWith((good) => good.replace("model: openai/gpt-4o\n", "model: gpt-4o\n"));
    expect(preview.code).not.toBe(0);
    expect(errorLines(preview.text)).toEqual([
      "error: agent-iac:index:ConversationalAgent resource 'front-desk' has a problem: config.runtime.model: must look like <vendor>/<model name>, e.g. openai/gpt-4o",
    ]);
    expect(preview.text).not.toMatch(/<nil>|map\[/);
  });

  it("names a mistyped key as an agent file does, and only it: no error on the resources declared beside it", async () => {
    // call-notes is declared at the same time as the directory `support`, whose construct is under way.
    const preview = await previewWith((good) =>
      good.replace("filter_statuses: [completed]", "filter_statusez: [completed]"),
    );
    expect(preview.code).not.toBe(0);
    expect(errorLines(preview.text)).toEqual([
      'error: agent-iac:index:ProceduralAgent resource \'call-notes\' has a problem: config.filter_statusez: unknown key "filter_statusez" (did you mean "filter_statuses"?)',
    ]);
    expect(preview.text).not.toMatch(/grpc|map\[|Write a three-line note/);
  });

  it("refuses a dir outside the program's directory or holding no agent files, naming it", async () => {
    await mkdir(path.join(packed.project, "empty-folder"), { recursive: true });
    await writeFile(path.join(packed.work, "outside.yaml"), "kind: procedural\n");
    const refusals: [string, RegExp][] = [
      ["../", /dir "\.\.\/" is outside the program's directory/],
      ["/etc", /dir "\/etc" is outside the program's directory/],
      ["empty-folder", /"empty-folder" holds no agent files/],
    ];
    for (const [dir, message] of refusals) {
      const preview = await previewWith((good) => good.replace("dir: agents", `dir: ${dir}`));
      expect(preview.code, dir).not.toBe(0);
      const errors = errorLines(preview.text);
      expect(errors, dir).toHaveLength(1);
      expect(errors[0], dir).toMatch(
        /^error: agent-iac:index:AgentDirectory resource 'support' has a problem: AgentDirectory: /,
      );
      expect(errors[0], dir).toMatch(message);
    }
  });

  it("creates the agents with their exact bodies, linked by resource and by the directory's keys", async () => {
    const up = await pulumi("up", "--yes");
    expect(up.code, up.stdout + up.stderr).toBe(0);
    const outputs = await stackOutputs();
    expect(Object.keys(outputs.versions).sort()).toEqual(["support", "support-summary"]);

    const stored = await storedAgents(packed.sim);
    const body = (kind: keyof StoredAgents, version: string | undefined) => {
      const agent = stored[kind].find((a) => a.id === idOf(version)) as Record<string, unknown> | undefined;
      return agent && { name: agent.name, description: agent.description, config: agent.config };
    };
    const declared = (parse(await readFile(program, "utf8")) as Program).resources;
    const props = (key: string) => {
      const { name, description, config } = declared[key]?.properties ?? {};
      return { name, description, config };
    };
    expect(body("procedural", outputs["call-notes"])).toEqual(props("call-notes"));
    expect(body("conversational", outputs["front-desk"])).toEqual(props("front-desk"));
    const file = parse(await readFile(path.join(packed.project, "agents", "support.yaml"), "utf8"));
    expect(body("conversational", outputs.versions.support)).toEqual({
      name: file.name,
      description: file.description,
      config: file.config,
    });
    const links = (version: string | undefined) =>
      stored.conversational.find((a) => a.id === idOf(version))?.postprocess_agents;
    expect(links(outputs["front-desk"])).toEqual([idOf(outputs["call-notes"])]);
    expect(links(outputs.versions.support)).toEqual([idOf(outputs.versions["support-summary"])]);
  });

  it("previews no changes after it, and the state holds no absolute path of the machine", async () => {
    const preview = await pulumi("preview", "--expect-no-changes");
    expect(preview.code, preview.stdout + preview.stderr).toBe(0);
    const state = (await pulumi("stack", "export")).stdout;
    expect(state).toContain('"dir": "agents"');
    expect(state).not.toContain(packed.work);
    expect(state).not.toContain(projectRoot);
    expect(printed.filter((text) => text.includes(API_KEY))).toEqual([]);
  });

  it("keeps an absolute dir inside the program relative in the state: the same directory, no change", async () => {
    const good = await readFile(program, "utf8");
    await writeFile(program, good.replace("dir: agents", `dir: ${path.join(packed.project, "agents")}`));
    try {
      const up = await pulumi("up", "--yes");
      expect(up.code, up.stdout + up.stderr).toBe(0);
      expect(up.stdout).not.toMatch(/AgentDirectory support|support-summary\s+(replaced|created)/);
      const state = (await pulumi("stack", "export")).stdout;
      expect(state).toContain('"dir": "agents"');
      expect(state).not.toContain(packed.work);
    } finally {
      await writeFile(program, good);
    }
  });

  it("smoke-calls the YAML-declared and the directory's agents with `npx agent-iac smoke`", async () => {
    const smoke = await run("npx", ["agent-iac", "smoke", "--stack", "dev"], packed.project, env);
    printed.push(smoke.stdout, smoke.stderr);
    expect(smoke.code, smoke.stdout + smoke.stderr).toBe(0);
    expect(smoke.stdout).toMatch(/front-desk\/greets-and-takes-notes/);
    expect(smoke.stdout).toMatch(/support\/greets/);
    expect(smoke.stdout).toMatch(/^2 passed, 0 failed$/m);
  });

  it("replaces an agent whose prompt changed, and only it", async () => {
    const before = await stackOutputs();
    const good = await readFile(program, "utf8");
    await writeFile(program, good.replace("Take a message politely.", "Take a message kindly."));
    try {
      const up = await pulumi("up", "--yes");
      expect(up.code, up.stdout + up.stderr).toBe(0);
      expect(up.stdout).toMatch(/ConversationalAgent front-desk replaced/);
      const after = await stackOutputs();
      expect(idOf(after["front-desk"])).not.toBe(idOf(before["front-desk"]));
      expect(after["call-notes"]).toBe(before["call-notes"]);
      expect(after.versions).toEqual(before.versions);
    } finally {
      await writeFile(program, good);
    }
  });

  it("works through the documented route too: the plugin folder without its launcher, run by the Node.js host", async () => {
    // Until now the engine ran the installed launcher (an executable named pulumi-resource-<name> wins).
    const launcher = path.join(
      packed.project,
      "node_modules",
      "agent-iac",
      "pulumi-plugin",
      "pulumi-resource-agent-iac",
    );
    await access(launcher, constants.X_OK);
    await rm(launcher);
    expect((await pulumi("stack", "init", "documented")).code).toBe(0);
    expect((await pulumi("config", "set", "agents:baseUrl", packed.sim.url)).code).toBe(0);
    // Here front-desk links its procedural agent by id rather than by resource.
    const byResource = "- $" + "{call-notes}\n"; // Pulumi YAML's interpolation, not a template
    const good = await readFile(program, "utf8");
    expect(good).toContain(byResource);
    await writeFile(program, good.replace(byResource, "- $" + "{call-notes.agentId}\n"));
    try {
      const up = await pulumi("up", "--yes");
      expect(up.code, up.stdout + up.stderr).toBe(0);
      const outputs = await stackOutputs();
      const stored = await storedAgents(packed.sim);
      const links = stored.conversational.find((a) => a.id === idOf(outputs["front-desk"]))?.postprocess_agents;
      expect(links).toEqual([idOf(outputs["call-notes"])]);
      expect(Object.keys(outputs.versions).sort()).toEqual(["support", "support-summary"]);
      const preview = await pulumi("preview", "--expect-no-changes");
      expect(preview.code, preview.stdout + preview.stderr).toBe(0);
    } finally {
      await writeFile(program, good);
    }
  });

  it("generates Python, Go and .NET SDKs from the provider's schema with `pulumi package gen-sdk`", async () => {
    const plugin = "./node_modules/agent-iac/pulumi-plugin"; // as docs/yaml.md writes it: a path, not a registry name
    const expected: Record<string, string> = {
      python: "python/agent_iac/conversational_agent.py",
      go: "go/agentiac/conversationalAgent.go",
      dotnet: "dotnet/ConversationalAgent.cs",
    };
    for (const [language, file] of Object.entries(expected)) {
      const generated = await run(
        "pulumi",
        ["package", "gen-sdk", plugin, "--language", language, "--out", "sdk"],
        packed.project,
        env,
      );
      expect(generated.code, generated.stdout + generated.stderr).toBe(0);
      const source = await readFile(path.join(packed.project, "sdk", file), "utf8");
      expect(source).toMatch(/postprocess_agents|PostprocessAgents/);
      expect(source).toContain("agent-iac:index:ConversationalAgent");
    }
  });
});

/** The fenced blocks of docs/yaml.md's walk from an empty folder, in order. */
async function documentedWalk() {
  const doc = await readFile(path.join(projectRoot, "docs", "yaml.md"), "utf8");
  const start = doc.indexOf("## A Pulumi YAML program, from an empty folder");
  expect(start).toBeGreaterThanOrEqual(0);
  const section = doc.slice(start, doc.indexOf("\n## ", start + 1));
  return [...section.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] ?? "", text: m[2] ?? "" }));
}

/** A port nothing listens on now (the doc names a fixed one; tests on a shared machine cannot). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe("docs/yaml.md's walk, as written, from an empty folder", { timeout: 900_000 }, () => {
  let work: string;
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("installs the packed tarball, deploys the documented program and passes its smoke scenario", async () => {
    const [checkout, folder, program, smoke, deploy] = await documentedWalk();
    // The checkout's steps are the ones this run takes: its one `npm pack`, and ensure-pulumi's directory on PATH.
    expect(checkout?.text).toContain("npm pack\n");
    expect(checkout?.text).toContain('export PATH="$(scripts/ensure-pulumi --yaml | tail -n 1):$PATH"');
    const tarball = await packedTarball();
    const ensured = await run(path.join(projectRoot, "scripts", "ensure-pulumi"), ["--yaml"], projectRoot, process.env);
    expect(ensured.code, ensured.stderr).toBe(0);
    const pulumiDir = ensured.stdout.trim().split("\n").at(-1) ?? "";

    // The files the walk writes, by the name each block's first line gives.
    const files = [program, smoke].map((block) => {
      expect(block?.lang).toBe("yaml");
      const name = /^# (\S+)\n/.exec(block?.text ?? "")?.[1] ?? "";
      return { name, text: block?.text ?? "" };
    });
    expect(files.map((f) => f.name)).toEqual(["Pulumi.yaml", "smoke/front-desk.yaml"]);
    const port = await freePort();
    // The simulator's line as written, with this run's port; its output is waited for before the deploy.
    const service = `npx agent-iac service --port 8787 &`;
    expect(deploy?.text).toContain(service);
    const steps = (deploy?.text ?? "")
      .replaceAll("8787", String(port))
      .replace(
        service.replace("8787", String(port)),
        `npx agent-iac service --port ${port} > service.log 2>&1 &\n` +
          "until grep -q listening service.log 2>/dev/null; do sleep 0.2; done",
      );
    const script = [
      "set -euo pipefail",
      folder?.text ?? "",
      ...files.map((f) => `mkdir -p "$(dirname ${f.name})"\ncat > ${f.name} <<'AGENT_IAC_DOC'\n${f.text}AGENT_IAC_DOC`),
      steps,
    ].join("\n");

    work = await mkdtemp(path.join(os.tmpdir(), "agent-iac-yaml-walk-"));
    const { PULUMI_BACKEND_URL: _b, PULUMI_CONFIG_PASSPHRASE: _p, AGENT_IAC_API_KEY: _k, ...inherited } = process.env;
    const env = {
      ...inherited,
      // Node 22 or later and the CLI with the YAML host first on PATH, as the checkout's step leaves it.
      PATH: [pulumiDir, path.dirname(process.execPath), process.env.PATH].filter(Boolean).join(path.delimiter),
      CHECKOUT: path.dirname(tarball),
      PULUMI_HOME: path.join(work, "pulumi-home"),
      PULUMI_SKIP_UPDATE_CHECK: "1",
      NO_COLOR: "1",
    };
    expect(path.basename(tarball)).toBe("agent-iac-0.1.0.tgz");
    // Its own process group: the simulator the walk leaves in the background ends with it.
    const child = spawn("bash", ["-c", script], { cwd: work, env, detached: true });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr.on("data", (chunk) => {
      out += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      process.kill(-(child.pid as number), "SIGTERM");
    } catch {
      // the group has ended
    }
    expect(code, out).toBe(0);
    expect(out).toMatch(/ConversationalAgent\s+front-desk\s+created/);
    expect(out).toMatch(/front-desk\/greets/);
    expect(out).toMatch(/^1 passed, 0 failed$/m);
    // The state, where the walk put it, names no path of this machine.
    const stateDir = path.join(work, "front-desk", ".pulumi-state");
    const states = (await readdir(stateDir, { recursive: true, withFileTypes: true })).filter(
      (e) => e.isFile() && e.name === "dev.json",
    );
    expect(states).toHaveLength(1);
    const state = await readFile(path.join(states[0]?.parentPath ?? "", "dev.json"), "utf8");
    expect(state).not.toContain(work);
    expect(state).not.toContain(projectRoot);
  });
});

describe("scripts/ensure-pulumi --yaml on a cache built before it", { timeout: 600_000 }, () => {
  it("rebuilds a minimal Node.js host that rejects -root, and keeps the rest", async () => {
    const script = path.join(projectRoot, "scripts", "ensure-pulumi");
    const ensured = await run(script, ["--yaml"], projectRoot, process.env);
    expect(ensured.code, ensured.stderr).toBe(0);
    const built = ensured.stdout.trim().split("\n").at(-1) ?? "";
    const cache = await mkdtemp(path.join(os.tmpdir(), "agent-iac-yaml-cache-"));
    try {
      const dir = path.join(cache, "pulumi", path.basename(built));
      await mkdir(dir, { recursive: true });
      await symlink(path.join(built, "pulumi"), path.join(dir, "pulumi"));
      const kept = ["pulumi-resource-pulumi-nodejs", "pulumi-analyzer-policy", "pulumi-language-yaml"];
      for (const file of [...kept, "pulumi-language-python", "pulumi-language-go", "pulumi-language-dotnet"]) {
        await copyFile(path.join(built, file), path.join(dir, file));
      }
      await writeFile(path.join(dir, "LANGUAGE-HOST"), "agent-iac's minimal Node.js language host (before --yaml)\n");
      // The host as it was: it knows no -root (Go's flag package exits 2 on an unknown flag).
      const old = '#!/bin/sh\necho "flag provided but not defined: -root" >&2\nexit 2\n';
      await writeFile(path.join(dir, "pulumi-language-nodejs"), old, { mode: 0o755 });

      const upgraded = await run(script, ["--yaml"], projectRoot, { ...process.env, AGENT_IAC_CACHE_DIR: cache });
      expect(upgraded.code, upgraded.stderr).toBe(0);
      expect(upgraded.stdout.trim().split("\n").at(-1)).toBe(dir);
      expect(upgraded.stderr).toMatch(/upgrading the minimal language host .*: it learns to run component providers/);
      const host = await run(path.join(dir, "pulumi-language-nodejs"), ["-root", ".", "-version"], dir, process.env);
      expect(host.code, host.stderr).toBe(0);
      expect(upgraded.stderr).not.toMatch(/building pulumi-language-yaml|building the code generators/);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });
});
