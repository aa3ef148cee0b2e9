// `smoke --replay`: the current expectations evaluated against recorded calls, offline (the stack
// file's settings, no state, no network but the judge's for votes not in its cache).
import path from "node:path";
import { type Judge, movingModels } from "../judge/index.ts";
import type { Report } from "../results/index.ts";
import type { ProjectContext } from "../settings/index.ts";
import { replaySmoke, type Selection, selectedScenarios } from "../smoke/index.ts";
import { type JudgeCacheOptions, setupJudge } from "./judge.ts";
import { openSession } from "./session.ts";
import type { JobIO } from "./smoke-job.ts";

export type ReplayRequest = {
  stack: string;
  project: ProjectContext;
  /** The directory of recordings (`smoke --record DIR`). */
  dir: string;
  selection: Selection;
  judgeCache?: JudgeCacheOptions;
};

/** The recordings' directory as the user names it: relative to the project where it is inside it. */
function projectPath({ project, dir }: ReplayRequest): string {
  const relative = path.relative(project.dir, dir);
  return relative === "" ? "." : relative.startsWith("..") || path.isAbsolute(relative) ? dir : relative;
}

export async function replayRun(request: ReplayRequest, io: Pick<JobIO, "out" | "onRetry">): Promise<Report> {
  // Offline: no state, so smoke/<key>.yaml stands for the agents declared in code.
  const session = await openSession(request.stack, { project: request.project, source: "file", optional: true });
  const definitions = await session.scenarioAgents();
  const scenarios = selectedScenarios(definitions, request.selection);
  let judge: Judge | undefined;
  // A selected scenario with no recording is not recorded (not run): it needs no judge.
  const judgeFor = async (recorded: ReadonlySet<string>) => {
    const replayed = scenarios.filter((s) => recorded.has(`${s.agent}\u0000${s.scenario.name}`));
    notRecorded = scenarios.filter((s) => !recorded.has(`${s.agent}\u0000${s.scenario.name}`));
    judge = await setupJudge(replayed, session.judge, {
      project: request.project,
      ...(request.judgeCache ? { cache: request.judgeCache } : {}),
      stack: request.stack,
      ...(io.onRetry ? { onRetry: io.onRetry } : {}),
    });
    return judge;
  };
  let notRecorded: typeof scenarios = [];
  try {
    const { report } = await replaySmoke({
      definitions,
      dir: request.dir,
      agents: request.selection.agents,
      scenarios: request.selection.scenarios,
      stack: request.stack,
      out: io.out,
      judgeFor,
      notes: movingModels(
        scenarios.map((s) => s.scenario),
        session.judge,
        undefined,
      ).map((warning) => `warning: ${warning}`),
    });
    if (notRecorded.length > 0) {
      const names = notRecorded.map((s) => `${s.agent}/${s.scenario.name}`).join(", ");
      const note = `not recorded (not run): ${names}: no recording of ${notRecorded.length === 1 ? "it" : "them"} in ${projectPath(request)}`;
      report.notes.push(note);
      io.out.write(`${note}\n`);
    }
    return report;
  } finally {
    await judge?.client.close();
  }
}
