// `previous_versions`: the version each agent held before its current one, kept by the stack itself,
// so a version a replace left still taking calls is named by its key on any backend — also where the
// backend keeps no readable history (PostgreSQL, S3, Pulumi Cloud: src/watch/history.ts reads only a
// file backend's). The program reads the outputs its stack's last update left (Pulumi's built-in
// `readStackOutputs` invoke: no resource in the state, and the backend's stored checkpoint, which this
// update has not changed yet) and, for every agent whose version changes, the old one; an agent that
// keeps its version keeps the previous version it had.
import * as pulumi from "@pulumi/pulumi";

/** The output's name (the program's and AgentDirectory's). */
export const PREVIOUS_VERSIONS_OUTPUT = "previous_versions";

const isVersionMap = (value: unknown): value is Record<string, string> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((v) => typeof v === "string");

/** What a stack's last update left: its `versions` and `previous_versions` outputs ({} each on a new stack). */
export type VersionsBefore = { versions: Record<string, string>; previous: Record<string, string> };

/** The versions and previous versions in a set of outputs (a stack's, or a component's registered ones). */
export function versionsBeforeIn(outputs: unknown): VersionsBefore {
  const o = (typeof outputs === "object" && outputs !== null ? outputs : {}) as Record<string, unknown>;
  return {
    versions: isVersionMap(o.versions) ? o.versions : {},
    previous: isVersionMap(o[PREVIOUS_VERSIONS_OUTPUT]) ? o[PREVIOUS_VERSIONS_OUTPUT] : {},
  };
}

/**
 * The outputs of this stack as its last update left them, read through the engine's built-in
 * provider. A backend that cannot answer (an old CLI) gives none, said once as a warning: the
 * previous versions then start again from this update.
 */
export async function stackOutputsBefore(): Promise<Record<string, unknown>> {
  const name = `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
  try {
    const result = (await pulumi.runtime.invoke("pulumi:pulumi:readStackOutputs", { name })) as {
      outputs?: Record<string, unknown>;
    };
    return result?.outputs ?? {};
  } catch (error) {
    pulumi.log.warn(
      `could not read the outputs of the stack's last update (${(error as Error).message}): ${PREVIOUS_VERSIONS_OUTPUT} starts again from this update`,
    );
    return {};
  }
}

/**
 * The outputs a component registered in the stack's last update (`readStackResourceOutputs`: every
 * resource's outputs by URN), read before its children are declared; {} when it is new.
 */
export async function componentOutputsBefore(component: pulumi.Resource): Promise<Record<string, unknown>> {
  const urn = await new Promise<string>((resolve) => component.urn.apply(resolve));
  const stackName = `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
  try {
    const result = (await pulumi.runtime.invoke("pulumi:pulumi:readStackResourceOutputs", { stackName })) as {
      outputs?: Record<string, { outputs?: Record<string, unknown> } | undefined>;
    };
    return result?.outputs?.[urn]?.outputs ?? {};
  } catch (error) {
    pulumi.log.warn(
      `could not read the outputs of the stack's last update (${(error as Error).message}): ${PREVIOUS_VERSIONS_OUTPUT} starts again from this update`,
      component,
    );
    return {};
  }
}

/** Key → the version before the current one: the old version where it changes, else the one already recorded. */
export function previousVersionsOf(current: Record<string, string>, before: VersionsBefore): Record<string, string> {
  const previous: Record<string, string> = {};
  for (const [key, version] of Object.entries(current)) {
    const old = before.versions[key];
    const chosen = old !== undefined && old !== version ? old : before.previous[key];
    if (chosen !== undefined && chosen !== version) previous[key] = chosen;
  }
  return previous;
}

/** The `previous_versions` output of a set of agents' `versions`. */
export function previousVersions(
  versions: Record<string, pulumi.Output<string>>,
  before: VersionsBefore,
): pulumi.Output<Record<string, string>> {
  return pulumi.all(versions).apply((current) => previousVersionsOf(current, before));
}
