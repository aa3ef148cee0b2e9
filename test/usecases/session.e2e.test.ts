// The session use case against two real stacks, each in its own project on its own file backend,
// opened side by side in one process: the backend, passphrase and settings each session uses come
// from the project's context passed in, never from process.env or the process's directory.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectContext } from "../../src/settings/index.ts";
import { openSession } from "../../src/usecases/session.ts";
import { type AgentsProject, agentsProject } from "../helpers/agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "../helpers/pulumi.ts";

describe("openSession with the project's context", () => {
  const sandboxes: PulumiSandbox[] = [];
  const projects: AgentsProject[] = [];

  beforeAll(async () => {
    sandboxes.push(await pulumiSandbox(), await pulumiSandbox());
    for (const [i, sandbox] of sandboxes.entries()) {
      projects.push(await agentsProject(sandbox, { baseUrl: `http://127.0.0.1:${9101 + i}` }));
    }
  });

  afterAll(async () => {
    for (const project of projects) await project.cleanup();
    for (const sandbox of sandboxes) await sandbox.cleanup();
  });

  it("two stacks on two backends, opened side by side with their own environments", async () => {
    const [a, b] = projects as [AgentsProject, AgentsProject];
    const [envA, envB] = sandboxes.map((sandbox) => sandbox.env) as [Record<string, string>, Record<string, string>];
    const [first, second] = await Promise.all([
      openSession("test", { project: projectContext({ cwd: a.dir, env: { ...envA, AGENT_IAC_API_KEY: "key-a" } }) }),
      openSession("test", { project: projectContext({ cwd: b.dir, env: envB }) }),
    ]);
    expect([first.env.PULUMI_BACKEND_URL, second.env.PULUMI_BACKEND_URL]).toEqual([
      envA.PULUMI_BACKEND_URL,
      envB.PULUMI_BACKEND_URL,
    ]);
    expect(first.connection).toMatchObject({ baseUrl: "http://127.0.0.1:9101", apiKey: "key-a" });
    expect(second.connection).toMatchObject({ baseUrl: "http://127.0.0.1:9102", keySource: "the local dev key" });
    expect(first.dir).toBe(path.join(a.dir, "agents"));
    expect((await first.validFiles()).length).toBeGreaterThan(0);
    // A stack not created on the backend: `stack-or-file` falls back to the project's own stack file.
    await writeFile(path.join(b.dir, "Pulumi.other.yaml"), "config:\n  agents:baseUrl: http://127.0.0.1:9109\n");
    const fallback = await openSession("other", {
      project: projectContext({ cwd: b.dir, env: envA }),
      source: "stack-or-file",
    });
    expect(fallback.connection.baseUrl).toBe("http://127.0.0.1:9109");
    expect("stack" in fallback).toBe(false);
  });
});
