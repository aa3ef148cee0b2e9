// `start` checks the service before it deploys (issue 42): a reset simulator on the stack's address
// is named and nothing is created in it (exit 2 before `pulumi up`); a service on loopback that is
// not agent-iac's simulator (a port-forward or tunnel to the service: here a real simulator behind a
// plain HTTP forwarder that answers none of the /_simulator/ routes) is used as the stack's
// service, never replaced by a throwaway simulator; a stack other than dev with nothing at its
// address gets no local simulator; and a judged smoke with no judge stops before the up.
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../../../src/simulator/index.ts";
import { LOCAL_PASSPHRASE, projectRoot } from "../../../src/workspace/index.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { copyDevStack, freePort } from "../../helpers/dev-address.ts";
import { type PulumiSandbox, projectCopy, pulumiSandbox } from "../../helpers/pulumi.ts";
import { simulatorCall, storedAgents } from "../../helpers/simulator.ts";

const API_KEY = "sk-start-service-9b2e41d07c";

/** An HTTP forwarder to `target` that answers 404 on /_simulator/ (what a tunnel to the real service shows). */
function forwarder(target: string, host: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.url?.startsWith("/_simulator/")) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "not_found", message: "no such route" } }));
      return;
    }
    const upstream = http.request(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => {
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      resolve({
        url: `http://${host}:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

const agentCount = async (sim: Simulator) => {
  const stored = await storedAgents(sim);
  return stored.conversational.length + stored.procedural.length;
};

describe("start checks the service before it deploys", () => {
  let sandbox: PulumiSandbox;
  let project: { dir: string; cleanup(): Promise<void> };
  const logs: string[] = [];

  const start = async (...args: string[]) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...sandbox.env,
      AGENT_IAC_API_KEY: API_KEY,
      PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE,
    };
    for (const name of Object.keys(env)) if (name.startsWith("AGENT_IAC_JUDGE")) delete env[name];
    const result = await runInProcess(["start", ...args], { cwd: project.dir, env });
    logs.push(result.stdout, result.stderr);
    return result;
  };
  const stackFile = (stack: string, config: Record<string, string>) =>
    writeFile(
      path.join(project.dir, `Pulumi.${stack}.yaml`),
      `config:\n${Object.entries(config)
        .map(([k, v]) => `  ${k}: ${v}\n`)
        .join("")}`,
    );

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    project = await projectCopy(path.join(projectRoot, "test", "fixtures", "agents-project"));
    await copyDevStack(project.dir, projectRoot);
  });
  afterAll(async () => {
    await project?.cleanup();
    await sandbox?.cleanup();
  });

  it("a reset simulator on the stack's address with a pending change: exit 2 before pulumi up, nothing created there", async () => {
    const sim = await startSimulator({ host: "127.0.0.8", port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    try {
      await stackFile("held", { "agents:baseUrl": sim.url });
      const first = await start("--stack", "held", "--no-smoke");
      expect(first.code, first.stderr).toBe(0);
      expect(await agentCount(sim)).toBe(4);
      // The simulator loses its data; a change is pending (support's description).
      await simulatorCall(sim, "POST", "/_simulator/reset");
      const file = path.join(project.dir, "agents", "support.yaml");
      const original = await readFile(file, "utf8");
      await writeFile(file, original.replace(/^description: /m, "description: Reworded. "));
      try {
        const run = await start("--stack", "held");
        expect(run.code).toBe(2);
        expect(run.stdout).toContain(`using the simulator already serving ${sim.url}`);
        expect(run.stdout).not.toContain("pulumi up --yes (stack held)");
        expect(run.stderr).toMatch(/does not know 4 of the agents stack held pins/);
        expect(run.stderr).toContain("nothing was deployed");
        // The ways out: the simulator that holds them, another address, or the one recovery command.
        expect(run.stderr).toContain("pulumi config set agents:baseUrl");
        expect(run.stderr).toMatch(/pulumi up --yes --stack held --replace '[^']+::call-summary'/);
        expect(await agentCount(sim)).toBe(0);
      } finally {
        await writeFile(file, original);
      }
    } finally {
      await sim.close();
    }
  });

  it("a service on loopback that is not the simulator is used as the stack's service: the agents are created there", async () => {
    const backing = await startSimulator({ host: "127.0.0.9", port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    const tunnel = await forwarder(backing.url, "127.0.0.10");
    try {
      await stackFile("alt", { "agents:baseUrl": tunnel.url });
      const run = await start("--stack", "alt", "--no-smoke");
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(
        `using the service answering at ${tunnel.url} (not agent-iac's simulator: HTTP 404 to GET /_simulator/info) as stack alt's service`,
      );
      expect(run.stdout).not.toContain("local simulator:");
      expect(await agentCount(backing)).toBe(4);
    } finally {
      await tunnel.close();
      await backing.close();
    }
  });

  it("a stack other than dev with nothing at its loopback address gets no local simulator: exit 2, not deployed", async () => {
    const url = `http://127.0.0.11:${await freePort()}`;
    await stackFile("lonely", { "agents:baseUrl": url });
    const run = await start("--stack", "lonely");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`nothing answers at ${url} (stack lonely's agents:baseUrl)`);
    expect(run.stderr).toContain("stack lonely was not deployed");
    expect(run.stderr).toContain("npm run service -- --host 127.0.0.11");
    expect(run.stdout).not.toContain("local simulator:");
    expect(run.stdout).not.toContain("pulumi up --yes");
  });

  it("a judged scenario with no judge configured: exit 2 before pulumi up", async () => {
    const sim = await startSimulator({ host: "127.0.0.12", port: 0, apiKey: API_KEY, eventDelayMs: 1, quiet: true });
    try {
      const dir = path.join(project.dir, "agents-judged");
      await mkdir(dir, { recursive: true });
      await cp(path.join(project.dir, "agents"), dir, { recursive: true });
      const support = path.join(dir, "support.yaml");
      await writeFile(
        support,
        `${await readFile(support, "utf8")}\n`.replace(
          /^smoke:\n/m,
          'smoke:\n  - name: judged-greeting\n    channel: { callee_no: "+15550100100" }\n    expect: { judge: ["the agent greets the caller by its persona name"] }\n',
        ),
      );
      await stackFile("judged", { "agents:baseUrl": sim.url, "agents:dir": "agents-judged" });
      const run = await start("--stack", "judged");
      expect(run.code).toBe(2);
      expect(run.stderr).toContain("support/judged-greeting");
      expect(run.stderr).toContain("no judge is configured for stack judged");
      expect(run.stderr).toContain("nothing was deployed");
      expect(run.stdout).not.toContain("pulumi up --yes");
      expect(await agentCount(sim)).toBe(0);
    } finally {
      await sim.close();
    }
  });

  it("never writes the API key", () => {
    for (const text of logs) expect(text).not.toContain(API_KEY);
  });
});
