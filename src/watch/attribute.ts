// Which agent version handled a conversation. The interface says only that a conversation's
// `agent_id` is the "agent that handled the conversation": a service may answer the version
// (`ca_x@v2`) or the bare agent id (`ca_x`). A version id is taken as it is; a bare id is mapped
// to the one version of that agent the stack knows (current, in its history, or in a baseline
// file): every agent agent-iac creates has exactly one version, so that is unambiguous. A bare id
// of an agent the stack knows no version of (or several) stays as it is.
import { agentIdOf, isPinnedVersionId } from "../contract/index.ts";

/** How each conversation of a read was attributed, counted. */
export type Attribution = {
  /** `agent_id` was a version id (`ca_x@vN`): taken as it is. */
  by_version_id: number;
  /** `agent_id` was a bare agent id, mapped to the one version of that agent the stack knows. */
  by_bare_id: number;
  /** `agent_id` was a bare agent id of no version the stack knows (kept as it is). */
  unmapped_bare_id: number;
};

export type Attributor = {
  /** The version id a conversation's `agent_id` stands for (the id itself when it cannot say). */
  versionOf(agentId: string): string;
  counts: Attribution;
};

const noAttribution = (): Attribution => ({ by_version_id: 0, by_bare_id: 0, unmapped_bare_id: 0 });

/** An attributor over the version ids the stack knows (current, past, from a baseline file). */
export function attributor(knownVersions: Iterable<string>): Attributor {
  const byAgent = new Map<string, Set<string>>();
  for (const version of knownVersions) {
    if (!isPinnedVersionId(version)) continue;
    const versions = byAgent.get(agentIdOf(version)) ?? new Set<string>();
    versions.add(version);
    byAgent.set(agentIdOf(version), versions);
  }
  const counts = noAttribution();
  return {
    counts,
    versionOf(agentId) {
      if (isPinnedVersionId(agentId)) {
        counts.by_version_id++;
        return agentId;
      }
      const versions = byAgent.get(agentId);
      if (versions?.size === 1) {
        counts.by_bare_id++;
        return [...versions][0] ?? agentId;
      }
      counts.unmapped_bare_id++;
      return agentId;
    },
  };
}

/** The rule used, in a sentence for the reports ("calls attributed by …"). */
export function attributionText(a: Attribution): string {
  const parts: string[] = [];
  if (a.by_version_id > 0) parts.push(`${a.by_version_id} by the version id the service named (agent_id ca_x@vN)`);
  if (a.by_bare_id > 0) {
    parts.push(
      `${a.by_bare_id} by the bare agent id the service named (agent_id ca_x), mapped to the one version of that agent this stack knows`,
    );
  }
  if (a.unmapped_bare_id > 0) {
    parts.push(`${a.unmapped_bare_id} named a bare agent id of which this stack knows no single version (kept as is)`);
  }
  return parts.length === 0 ? "no calls to attribute" : `calls attributed: ${parts.join("; ")}`;
}

/** The rule's name for scripts: "version id", "bare agent id", "both" or "none". */
export function attributionRule(a: Attribution): "version id" | "bare agent id" | "both" | "none" {
  const bare = a.by_bare_id + a.unmapped_bare_id > 0;
  if (a.by_version_id > 0) return bare ? "both" : "version id";
  return bare ? "bare agent id" : "none";
}
