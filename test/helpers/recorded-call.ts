// A project copy holding a recording of one real call of the example agents (the simulator on
// port 0, placed in-process): what replay, judge and evidence tests evaluate offline.
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { runSmoke } from "../../src/smoke/index.ts";
import { projectRoot } from "../../src/workspace/index.ts";
import { type ExampleService, exampleService } from "./simulator.ts";

export type RecordedCall = {
  service: ExampleService;
  /** The project copy (agents/, prompts/, Pulumi.yaml); the recording is under rec/. */
  dir: string;
  /** The verdicts of the recorded run. */
  verdicts: string[];
  close(): Promise<void>;
};

export async function recordedCall(
  name: string,
  selection: { agent: string; scenario: string },
): Promise<RecordedCall> {
  const service = await exampleService({ eventDelayMs: 1 });
  const dir = await mkdtemp(path.join(os.tmpdir(), `${name}-`));
  await cp(path.join(projectRoot, "test", "fixtures", "agents-project"), dir, { recursive: true });
  await cp(path.join(projectRoot, "agents"), path.join(dir, "agents"), { recursive: true });
  await cp(path.join(projectRoot, "prompts"), path.join(dir, "prompts"), { recursive: true });
  const live = await runSmoke({
    definitions: service.agents,
    held: service.held,
    selection: { agents: [selection.agent], scenarios: [selection.scenario] },
    connection: { baseUrl: service.sim.url, apiKey: service.sim.apiKey },
    concurrency: 1,
    recordDir: path.join(dir, "rec"),
    out: { write: () => true, isTTY: false },
  });
  const close = async () => {
    await service.close();
    await rm(dir, { recursive: true, force: true });
  };
  return { service, dir, verdicts: live.report.scenarios.map((s) => s.verdict), close };
}
