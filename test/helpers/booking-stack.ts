// The use-case end-to-end files' stack: one agent (the booking example, which links no other, so
// each deploy is short) in a temp project on a real file backend, its service a simulator on port 0.
// The key is the stack's secret: the provider reads it from the stack, not from the test process.
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type ProjectContext, projectContext } from "../../src/settings/index.ts";
import { projectRoot } from "../../src/workspace/index.ts";
import { type AgentsProject, addScenarios, agentsProject, deployStack } from "./agents-project.ts";
import { type PulumiSandbox, pulumiSandbox } from "./pulumi.ts";
import { startTestSimulator } from "./simulator.ts";

export type BookingStack = {
  sandbox: PulumiSandbox;
  sim: Awaited<ReturnType<typeof startTestSimulator>>;
  project: AgentsProject;
  /** The run's project context, as a command builds it: this project, the sandbox's Pulumi settings. */
  context(): ProjectContext;
  close(): Promise<void>;
};

/** A scenario whose expectation the booking agent never meets: the run's failure, on purpose. */
export const NEVER_SAID = {
  name: "says-what-it-never-says",
  channel: { callee_no: "+15550142100" },
  expect: { says: ["a sentence this agent never says"] },
};

/** The stack, with the failing scenario added and deployed when asked (what `close` removes, whatever was made). */
export async function bookingStack(
  apiKey: string,
  { failing = false, deploy = false }: { failing?: boolean; deploy?: boolean } = {},
): Promise<BookingStack> {
  const made: { sandbox?: PulumiSandbox; sim?: BookingStack["sim"]; project?: AgentsProject; agentsDir?: string } = {};
  const close = async () => {
    await made.project?.cleanup();
    await made.sim?.close();
    await made.sandbox?.cleanup();
    if (made.agentsDir) await rm(made.agentsDir, { recursive: true, force: true });
  };
  try {
    made.sandbox = await pulumiSandbox();
    made.sim = await startTestSimulator({ port: 0, apiKey, eventDelayMs: 1, quiet: true });
    made.agentsDir = await mkdtemp(path.join(os.tmpdir(), "usecase-booking-agents-"));
    await cp(path.join(projectRoot, "agents", "booking.yaml"), path.join(made.agentsDir, "booking.yaml"));
    made.project = await agentsProject(made.sandbox, {
      baseUrl: made.sim.url,
      apiKey,
      secretKey: true,
      agentsFrom: made.agentsDir,
    });
    const { sandbox, sim, project } = made;
    if (failing) await addScenarios(project.dir, "booking", NEVER_SAID);
    if (deploy) await deployStack(project.stack);
    const context = () => projectContext({ cwd: project.dir, env: { ...process.env, ...sandbox.env } });
    return { sandbox, sim, project, context, close };
  } catch (error) {
    await close();
    throw error;
  }
}
