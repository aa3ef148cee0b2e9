// A secret in a stack whose secrets the public local-only passphrase encrypts (the dev stack's) is
// readable by anyone with its stack file (issue 49): smoke warns before anything else, naming the
// setting and where the key belongs instead; a stack with a passphrase of its own gets no warning.
// Real Pulumi CLI on a temp file backend; nothing is deployed (smoke stops at "holds no agents").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_PASSPHRASE } from "../../../src/workspace/index.ts";
import { type AgentsProject, agentsProject } from "../../helpers/agents-project.ts";
import { runInProcess } from "../../helpers/cli.ts";
import { type PulumiSandbox, pulumiSandbox } from "../../helpers/pulumi.ts";

const CALLER_KEY = "sk-dev-secrets-caller-51d0e2";

describe("a secret in a stack of the public passphrase", () => {
  let sandbox: PulumiSandbox;
  let publicStack: AgentsProject;
  let ownStack: AgentsProject;
  const publicEnv = () => ({ ...sandbox.env, PULUMI_CONFIG_PASSPHRASE: LOCAL_PASSPHRASE });

  beforeAll(async () => {
    sandbox = await pulumiSandbox();
    publicStack = await agentsProject(
      { ...sandbox, env: publicEnv() },
      { baseUrl: "http://127.0.0.1:9", stackName: "dev" },
    );
    ownStack = await agentsProject(sandbox, { baseUrl: "http://127.0.0.1:9", stackName: "own" });
    for (const project of [publicStack, ownStack]) {
      await project.stack.setConfig("agents:callerApiKey", { value: CALLER_KEY, secret: true });
    }
  });
  afterAll(async () => {
    await publicStack?.cleanup();
    await ownStack?.cleanup();
    await sandbox?.cleanup();
  });

  const smoke = (project: AgentsProject, stack: string, env: Record<string, string>) =>
    runInProcess(["smoke", "--stack", stack], { cwd: project.dir, env: { ...process.env, ...env } });

  it("warns, naming the setting and the environment variable, and never the value", async () => {
    const run = await smoke(publicStack, "dev", publicEnv());
    expect(run.stderr).toContain(
      "warning: stack dev holds agents:callerApiKey as a secret, but its secrets are encrypted with the public local-only passphrase",
    );
    expect(run.stderr).toContain("AGENT_IAC_CALLER_API_KEY");
    expect(`${run.stdout}${run.stderr}`).not.toContain(CALLER_KEY);
    // The run itself goes on as before: here, to the stack holding no agents.
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("holds no agents");
  });

  it("says nothing for a stack with a passphrase of its own", async () => {
    const run = await smoke(ownStack, "own", sandbox.env);
    expect(run.stderr).toContain("holds no agents");
    expect(run.stderr).not.toContain("public local-only passphrase");
  });
});
