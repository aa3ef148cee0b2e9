// Shared by the commands that work on an existing stack (plan, smoke): the stack, its config, and
// the agent files it deploys (the directory the program reads: the stack's agents:dir).
import path from "node:path";
import { loadAgents } from "../definitions/index.ts";
import { openStack, pulumiEnvironment } from "../workspace/index.ts";

export class MissingStack extends Error {
  constructor(stack: string) {
    super(`there is no stack "${stack}" on this backend: create it with \`pulumi stack init ${stack}\` first`);
    this.name = "MissingStack";
  }
}

/** Never creates a stack: a mistyped name must not plan every agent as new or find no outputs. */
export async function existingStack(stackName: string) {
  const stack = await openStack({ stackName, workDir: process.cwd(), create: false, env: pulumiEnvironment() }).catch(
    (error: unknown) => {
      if (/no stack named/i.test(String(error))) throw new MissingStack(stackName);
      throw error;
    },
  );
  const config = await stack.getAllConfig();
  const dir = path.resolve(config["agents:dir"]?.value ?? "agents");
  const { agents, errors } = await loadAgents(dir, { stack: stackName });
  return { stack, config, agents, errors };
}
