// The session use case against temporary projects, in-process: the project's directory and
// environment are passed in (src/settings ProjectContext), never read from the process, so two
// projects are read side by side in one test — which could not work while the session read
// process.cwd() and process.env.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StackNotFoundError } from "../../src/errors/index.ts";
import { projectContext, stackFiles } from "../../src/settings/index.ts";
import { openSession, stackConnection } from "../../src/usecases/session.ts";

const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A project directory holding `files` (path → text). */
async function tempProject(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "agent-iac-usecase-"));
  made.push(dir);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

const scenario = (says: string) =>
  `smoke:\n  - name: greets\n    channel: { callee_no: "+15550100200" }\n    expect: { says: ["${says}"] }\n`;

describe("use cases take the project's context", () => {
  it("two projects, each with its own directory and environment, are read side by side", async () => {
    const a = await tempProject({
      "Pulumi.dev.yaml": "config:\n  agents:judgeModel: model-a\n",
      "smoke/front-desk.yaml": scenario("this is Ada"),
    });
    const b = await tempProject({
      "Pulumi.dev.yaml": "config:\n  agents:baseUrl: https://b.example/v1\n",
      "smoke/back-office.yaml": scenario("this is Bea"),
    });
    const envA = { AGENT_IAC_BASE_URL: "https://a.example/v1", AGENT_IAC_API_KEY: "key-a" };
    const envB = { AGENT_IAC_JUDGE_MODEL: "model-b", AGENT_IAC_JUDGE_BASE_URL: "https://judge-b.example/v1" };
    const [first, second] = await Promise.all([
      openSession("dev", { project: projectContext({ cwd: a, env: envA }), source: "file" }),
      openSession("dev", { project: projectContext({ cwd: b, env: envB }), source: "file" }),
    ]);
    expect(first.connection).toMatchObject({
      baseUrl: "https://a.example/v1",
      apiKey: "key-a",
      keySource: "AGENT_IAC_API_KEY",
    });
    expect(second.connection).toMatchObject({ baseUrl: "https://b.example/v1", apiKey: undefined });
    expect([first.judge.model, first.judge.baseUrl]).toEqual(["model-a", undefined]);
    expect([second.judge.model, second.judge.baseUrl]).toEqual(["model-b", "https://judge-b.example/v1"]);
    expect([first.dir, second.dir]).toEqual([path.join(a, "agents"), path.join(b, "agents")]);
    expect(first.project.stateDir).toBe(path.join(a, ".agent-iac"));
    // The one scenario loader reads each project's smoke/ folder, not the process's directory.
    const [agentsA, agentsB] = await Promise.all([first.scenarioAgents(), second.scenarioAgents()]);
    expect(agentsA.map((agent) => [agent.key, agent.smoke.map((s) => s.expect.says)])).toEqual([
      ["front-desk", [["this is Ada"]]],
    ]);
    expect(agentsB.map((agent) => agent.key)).toEqual(["back-office"]);
    expect([a, b]).not.toContain(process.cwd());
  });

  it("an offline session of a project without its stack file: an error, or no settings when optional", async () => {
    const dir = await tempProject({ "smoke/front-desk.yaml": scenario("hello") });
    const project = projectContext({ cwd: dir, env: { AGENT_IAC_BASE_URL: "http://127.0.0.1:9" } });
    await expect(openSession("qa", { project, source: "file" })).rejects.toBeInstanceOf(StackNotFoundError);
    const session = await openSession("qa", { project, source: "file", optional: true });
    expect(session.config).toEqual({});
    // Loopback and no key anywhere: the local dev key, from this project's environment.
    expect(session.connection).toMatchObject({ baseUrl: "http://127.0.0.1:9", keySource: "the local dev key" });
  });

  it("stack-or-file asks the files first, then the CLI: plain files answer with no Pulumi run", async () => {
    // A backend no Pulumi CLI can open: reaching the CLI fails the session.
    const env = { PULUMI_BACKEND_URL: "nowhere://agent-iac-test", PULUMI_CONFIG_PASSPHRASE: "test-only" };
    const plain = await tempProject({
      "Pulumi.yaml": "name: chain\nruntime: nodejs\n",
      "Pulumi.dev.yaml": "config:\n  agents:baseUrl: http://127.0.0.1:9\n",
    });
    const session = await openSession("dev", { project: projectContext({ cwd: plain, env }), source: "stack-or-file" });
    expect(session.config).toEqual({ "agents:baseUrl": { value: "http://127.0.0.1:9", secret: false } });
    expect("stack" in session).toBe(false);
    // A secret: the files cannot say what the config is, so the CLI is asked (and fails here).
    const secret = await tempProject({
      "Pulumi.yaml": "name: chain\nruntime: nodejs\n",
      "Pulumi.dev.yaml": "config:\n  agents:apiKey:\n    secure: AAABAx\n",
    });
    const failure = await openSession("dev", { project: projectContext({ cwd: secret, env }), source: "stack-or-file" })
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(StackNotFoundError);
  });

  it("a pull request's guarded settings come from its base, each project's own", async () => {
    const dir = await tempProject({
      "Pulumi.dev.yaml": "config:\n  agents:judgeBaseUrl: https://attacker.example/v1\n  agents:judgeModel: m\n",
    });
    const settingsOf = async (text: string) =>
      (await stackFiles(async (file) => (file === "Pulumi.dev.yaml" ? text : undefined), "dev")).settings;
    const base = await settingsOf("config:\n  agents:judgeBaseUrl: https://judge.example/v1\n");
    const head = await settingsOf("config:\n  agents:judgeBaseUrl: https://attacker.example/v1\n");
    const project = projectContext({ cwd: dir, env: {} });
    const session = await openSession("dev", { project, source: "file", base: { base, head } });
    expect(session.judge.baseUrl).toBe("https://judge.example/v1");
    expect(session.judge.model).toBe("m");
  });

  it("a stack file is read by the one parser: a number is a value, a secret is not read offline", async () => {
    const dir = await tempProject({
      "Pulumi.dev.yaml":
        "config:\n  agents:judgeTimeoutSec: 30\n  agents:judgeModel: m\n  agents:apiKey:\n    secure: v1:abc\n",
    });
    const project = projectContext({ cwd: dir, env: {} });
    const session = await openSession("dev", { project, source: "file" });
    // The plan's settings diff reads the same file the same way (src/settings stackFiles).
    expect(session.judge.timeoutSec).toBe(30);
    expect(session.config["agents:apiKey"]).toBeUndefined();
    await writeFile(path.join(dir, "Pulumi.dev.yaml"), "config: [unclosed\n");
    await expect(openSession("dev", { project, source: "file" })).rejects.toThrow(/^Pulumi\.dev\.yaml: /);
  });

  it("an explicit address reads no stack, and takes the key from the project's environment", async () => {
    const dir = await tempProject({});
    const env = { AGENT_IAC_API_KEY: "key-from-context" };
    const connection = await stackConnection(projectContext({ cwd: dir, env }), "nowhere", {
      baseUrl: "https://service.example/v1",
    });
    expect(connection).toMatchObject({ baseUrl: "https://service.example/v1", apiKey: "key-from-context" });
  });
});
