// The deploy of `start`: `pulumi up --yes` on the session's stack against the service it uses,
// with the versions each agent had before (the comparison base, for the smoke phase's old-vs-new)
// taken from the update's own steps, and a failed up said once: each error diagnostic, then which
// declared agents the stack does not hold.
import type * as pulumi from "@pulumi/pulumi";
import { consumeBase, recordDeployBase } from "../compare/index.ts";
import { BackendError, InterruptedError } from "../errors/index.ts";
import { AGENT_TYPE_PREFIX, agentKeyOf } from "../provider/index.ts";
import { writeJsonFile } from "../report/index.ts";
import { exitCode, type Report } from "../results/index.ts";
import { notRunReport, planSmoke } from "../smoke/index.ts";
import {
  type Interrupts,
  interruptible,
  isRegistrationNoise,
  lockedStackError,
  pulumiErrorSummary,
  pulumiLogFilter,
  stripEscapes,
  upStack,
} from "../workspace/index.ts";
import type { LocalService } from "./local-service.ts";
import type { HeldAgents, StackSession } from "./session.ts";

export type DeployIO = {
  /** Pulumi's progress, filtered; and the run's own lines. */
  log: (text: string) => void;
  color: boolean;
  /** Aborted before the up: it does not start. */
  signal: AbortSignal;
  /** The process's SIGINT/SIGTERM, forwarded to the Pulumi CLI as a graceful cancel. */
  interrupts: Interrupts;
};

export type Deployed = {
  held: HeldAgents;
  changed: boolean;
  /** Each agent's version before the deploys not yet compared (the comparison base). */
  base: Record<string, string>;
};

export async function deploy(session: StackSession, service: LocalService, io: DeployIO): Promise<Deployed> {
  const before = versionsBefore(session, io.log);
  // An InterruptedError's `what` says how far the deploy got (the not-run report names it).
  if (io.signal.aborted) throw new InterruptedError(undefined, "the Pulumi run was not started");
  io.log(`pulumi up --yes (stack ${session.name})\n`);
  const filter = pulumiLogFilter(io.log, { color: io.color });
  const failures = errorDiagnostics();
  const { changes } = await interruptible(
    (text) => filter.write(text),
    (run) =>
      upStack(session.stack, {
        ...(service.configFile ? { configFile: service.configFile } : {}),
        ...session.policy(),
        onOutput: run.onOutput,
        onEvent: (event) => {
          before.onEvent(event);
          failures.onEvent(event);
        },
        signal: run.signal,
        color: io.color ? "always" : "never",
      }),
    io.interrupts,
  )
    .finally(() => filter.end())
    .catch(async (error: unknown) => {
      // A failed or interrupted up may have replaced agents: the base from before it stays pending,
      // with what the stack holds now as far as its state can still be read.
      const after = await session.held().then(versionIds, () => undefined);
      await before.save(after).catch(() => undefined);
      if (error instanceof InterruptedError) throw error;
      throw (
        lockedStackError(error, session.name, session.env, "npm start") ??
        (await deployFailure(error, session, failures.lines()))
      );
    });
  const held = await session.held();
  const base = await before.save(versionIds(held));
  const changed = Object.entries(changes).some(([op, n]) => op !== "same" && n > 0);
  return { held, changed, base };
}

const versionIds = (held: HeldAgents): Record<string, string> =>
  Object.fromEntries(Object.entries(held.agents).map(([key, agent]) => [key, agent.version_id]));

/**
 * The version each agent had before this deploy, read from the old state of the update's steps (no
 * extra Pulumi run; {} for a new stack). `save` returns the comparison base — the versions before
 * the first deploy not yet compared (src/compare/old-versions.ts) — and writes it to
 * reports/old-versions.json for a later `smoke --compare`.
 */
function versionsBefore({ name: stackName, project }: StackSession, log: (text: string) => void) {
  const versions: Record<string, string> = {};
  const seen = new Set<string>();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const metadata = event.resourcePreEvent?.metadata;
    if (!metadata?.type.startsWith(AGENT_TYPE_PREFIX)) return;
    const old = metadata.old?.outputs?.versionId;
    const key = agentKeyOf(metadata.urn);
    seen.add(key);
    if (typeof old === "string" && metadata.op !== "delete") versions[key] ??= old;
  };
  let saved: Promise<Record<string, string>> | undefined;
  /** `after`: what the stack holds after the deploy (undefined when its state could not be read). */
  const save = (after: Record<string, string> | undefined) => {
    saved ??= (async () => {
      const deployed = { versions, seen: [...seen], ...(after ? { after } : {}) };
      const { versions: base, carried } = await recordDeployBase(project.stateDir, stackName, deployed);
      if (carried) {
        log(
          `comparison base: the versions from before the deploy of ${carried}, whose comparison never completed (interrupted, failed or not run)\n`,
        );
      }
      await writeJsonFile("old-versions.json", base, project.dir);
      return base;
    })();
    return saved;
  };
  return { onEvent, save };
}

/** Pulumi's error lines, cleaned: no colour codes, no `at …` frames, no "unhandled exception" noise. */
export function cleanErrorLines(text: string): string {
  const seen = new Set<string>();
  let filtered = "";
  const filter = pulumiLogFilter(
    (line) => {
      filtered += line;
    },
    { color: false },
  );
  filter.write(text);
  filter.end();
  return stripEscapes(filtered)
    .split("\n")
    .filter((line) => !/^\s+at\s/.test(line) && !/^\s*(\{|\}|code: |stdout: |stderr: |err\?: )/.test(line))
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "" && !seen.has(line.trim()) && seen.add(line.trim()))
    .join("\n");
}

/** The error diagnostics of an update, from its engine events: `key: message`, each once. */
function errorDiagnostics() {
  const errors = new Map<string, string>();
  const onEvent = (event: pulumi.automation.EngineEvent) => {
    const diagnostic = event.diagnosticEvent;
    if (diagnostic?.severity !== "error" || isRegistrationNoise(diagnostic.message)) return;
    const key = diagnostic.urn && agentKeyOf(diagnostic.urn);
    const message = cleanErrorLines(diagnostic.message).replace(/^error: /, "");
    // The Stack's own "update failed" adds nothing to the resources' errors.
    if (message === "" || /^update failed$/.test(message)) return;
    const line = key && !diagnostic.urn?.includes("pulumi:pulumi:Stack") ? `${key}: ${message}` : message;
    errors.set(line, line);
  };
  return { onEvent, lines: () => [...errors.values()] };
}

/** A failed `pulumi up`: its error diagnostics (else the CLI's own lines, cleaned), then the agents not created. */
async function deployFailure(error: unknown, session: StackSession, diagnostics: string[]): Promise<BackendError> {
  const missing = await notCreated(session).catch(() => "");
  const lines =
    diagnostics.length > 0
      ? diagnostics.map((line) => `  ${line.replaceAll("\n", "\n  ")}`).join("\n")
      : cleanErrorLines(pulumiErrorSummary(error));
  return new BackendError(`pulumi up failed:\n${lines}${missing}`, { cause: error });
}

/** After a failed up: which declared agents the stack does not hold, and why when it is a link. */
async function notCreated(session: StackSession): Promise<string> {
  const { agents } = await session.agentFiles();
  const held = new Set(Object.keys((await session.held()).agents));
  const missing = agents.filter((a) => !held.has(a.key));
  if (missing.length === 0) return "";
  const lines = missing.map((agent) => {
    const blocked = agent.postprocessAgents.filter((key) => !held.has(key));
    const why =
      blocked.length > 0
        ? `not attempted: linked procedural agent ${blocked.join(", ")} was not created`
        : "see its error above";
    return `  ${agent.key} (${agent.kind}): ${why}`;
  });
  return `\n\nnot created (${missing.length} of ${agents.length}); run again once the cause is fixed:\n${lines.join("\n")}`;
}

/**
 * The smoke phase's comparison over the base ended: one that completed (whatever it found: its
 * report's exit code 0 or 1) consumes the base, so the next deploy records its own; an errored or
 * interrupted one (3, 130) keeps it for the next run.
 */
export async function settleComparisonBase(session: StackSession, report: Report): Promise<void> {
  if (exitCode(report) <= 1) await consumeBase(session.project.stateDir, session.name);
}

/**
 * `pulumi up` was cancelled (or never started): the report of the smoke phase that will not run,
 * every scenario not run, pinned to what the stack holds where it holds the agent; undefined when
 * there is nothing to plan (no state, no scenarios).
 */
export async function notRunAfterUp(session: StackSession): Promise<Report | undefined> {
  const held = await session.held().catch(() => undefined);
  const definitions = held && (await session.scenarioAgents(held).catch(() => undefined));
  if (!held || !definitions) return undefined;
  try {
    const plan = planSmoke(definitions, held.agents, { allowUnpinned: true, live: true, notDeployed: "(not created)" });
    const reason = "`pulumi up` was interrupted first";
    return notRunReport(plan, { reason, stack: session.name, interrupted: true });
  } catch {
    return undefined;
  }
}
