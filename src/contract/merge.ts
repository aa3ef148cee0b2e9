// One deep merge for the whole project: `override_config` over an agent's config (simulator) and an
// environment overlay over an agent file (definitions). Prototype-safe: keys are copied with
// defineProperty, so a "__proto__" key in JSON or YAML stays a plain own key and never changes a
// prototype.

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export type MergeOptions = {
  /** Keys whose value is replaced whole, never merged (the definitions replace a whole `prompt`). */
  replaceWhole?: readonly string[];
};

/**
 * `override` merged over `base`: objects key by key, everything else (arrays, scalars) replaced;
 * an undefined override keeps the base. Neither argument is changed.
 */
export function deepMerge<T>(base: T, override: unknown, options: MergeOptions = {}): T {
  return merge(base, override, options.replaceWhole ?? [], undefined) as T;
}

function merge(base: unknown, override: unknown, whole: readonly string[], key: string | undefined): unknown {
  if (override === undefined) return base;
  if (!isRecord(base) || !isRecord(override) || (key !== undefined && whole.includes(key))) return override;
  const out: Json = {};
  const set = (k: string, v: unknown) =>
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  for (const k of Object.keys(base)) set(k, base[k]);
  for (const k of Object.keys(override)) {
    set(k, Object.hasOwn(base, k) ? merge(base[k], override[k], whole, k) : override[k]);
  }
  return out;
}
