// Drift on demand (POST /_simulator/degrade): a pinned version degrades from now on, as a real
// service's model or tool change would degrade it under an unchanged version: its tool calls dropped
// in N % of its conversations (the agent answers without calling the tool), its answers slowed by
// X ms. Selection is counter-based like the faults' (the n-th conversation of the version is affected
// exactly when floor(n·r) > floor((n−1)·r)), so a test's drop is exact, not drawn.
import { z } from "zod";
import { isPinnedVersionId } from "../contract/index.ts";
import { failsAt } from "./dialogue.ts";

export const degradeRequest = z.strictObject({
  version_id: z.string().refine(isPinnedVersionId, "a pinned version id (ca_x@vN)"),
  /** Share of the version's conversations (from now on) whose tool calls are dropped, in percent. */
  tool_call_drop_percent: z.number().min(0).max(100).default(0),
  /** Added before each of its answers (the greeting and each reply), in milliseconds. */
  slow_ms: z.int().min(0).max(60_000).default(0),
});
export type DegradeRequest = z.infer<typeof degradeRequest>;

export type Degradation = DegradeRequest & { since: string; conversations: number; dropped: number };

/** What one conversation of a version gets: its tool calls dropped or not, and its answers' added delay. */
export type Degraded = { dropToolCalls: boolean; slowMs: number };

export class Degradations {
  readonly #byVersion = new Map<string, Degradation>();

  /** Degrades the version from now on (replacing an earlier degradation of it). */
  set(request: DegradeRequest, now: string): Degradation {
    const degradation = { ...request, since: now, conversations: 0, dropped: 0 };
    this.#byVersion.set(request.version_id, degradation);
    return { ...degradation };
  }

  /** Recovers one version (or every one): its conversations from now on are as before. */
  clear(versionId?: string): number {
    if (versionId === undefined) {
      const count = this.#byVersion.size;
      this.#byVersion.clear();
      return count;
    }
    return this.#byVersion.delete(versionId) ? 1 : 0;
  }

  list(): Degradation[] {
    return [...this.#byVersion.values()].map((d) => ({ ...d }));
  }

  /** Counts a conversation starting on the version and says how it is degraded (none: not at all). */
  start(versionId: string): Degraded | undefined {
    const d = this.#byVersion.get(versionId);
    if (!d) return undefined;
    d.conversations++;
    const dropToolCalls = failsAt(d.conversations, d.tool_call_drop_percent / 100);
    if (dropToolCalls) d.dropped++;
    return { dropToolCalls, slowMs: d.slow_ms };
  }
}
