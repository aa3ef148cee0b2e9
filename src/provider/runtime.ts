// The implementation behind the dynamic providers, loaded by module name
// ("agent-iac/provider-runtime") inside the provider host when a method runs, so nothing here is
// serialized into the state. `handle` is the one entry point the serialized providers call: keep
// its signature stable, since the state of every stack deployed since holds providers calling it.
// Light on purpose: check and diff of an unchanged agent load nothing but node:crypto; the schemas
// are loaded for a changed agent only, the service client for a create only. No top-level side
// effects.
import { isDeepStrictEqual } from "node:util";
import { containsUnknown, type Digests, digest, FIELDS, normalize, type Props, requestBody, UNKNOWN } from "./body.ts";
import type { AgentKind, ConfiguredProvider } from "./index.ts";

/** The stack config the provider host passed to `configure` (one stack per provider process). */
let configured: ConfiguredProvider = {};

type ConfigureRequest = { config: { get(key: string): string | undefined } };

function isConfigureRequest(value: unknown): value is ConfigureRequest {
  return typeof (value as { config?: { get?: unknown } } | undefined)?.config?.get === "function";
}

/**
 * One function serves every method of a serialized provider (so the state stores it once, not once
 * per method), and this tells the methods apart by the arguments the provider host passes:
 * `configure(request)`, `check(olds, news)`, `diff(id, olds, news)`, `create(inputs)`,
 * `delete(id, props)`. The provider has no `read` or `update`, so the host never calls them.
 * An agent body's `config` is plain JSON: only the configure request's has a `get` method.
 */
export async function handle(kind: AgentKind, args: ArrayLike<unknown>): Promise<unknown> {
  const [first, second, third] = Array.from(args);
  if (args.length === 3) return diffAgent(kind, second as Props, third as Props);
  if (args.length === 2 && typeof first === "string") return deleted(kind, first);
  if (args.length === 2) return checkAgent(kind, first as Props, second as Props);
  if (args.length === 1 && isConfigureRequest(first)) {
    configured = { config: first.config };
    return undefined;
  }
  if (args.length === 1) {
    const { createAgent } = await import("./create.ts");
    return createAgent(kind, configured, first as Props);
  }
  throw new Error(`the ${kind} agent provider has no method taking ${args.length} argument(s)`);
}

/** A removed agent: nothing to call (the service documents no delete); it says so. */
function deleted(kind: AgentKind, id: string): void {
  console.error(`${kind} agent ${id} is no longer managed by this stack; the service keeps it.`);
}

/** Where a value is not known until apply, what the schema sees instead: a link is a procedural agent id. */
function standIn(path: readonly PropertyKey[]): unknown {
  return path[0] === "postprocess_agents" ? "pa_unknown" : undefined;
}

/** Replaces unknown values by their field's stand-in; collects the paths that held one. */
function withStandIns(value: unknown, path: PropertyKey[], unknownPaths: string[]): unknown {
  if (value === UNKNOWN) {
    unknownPaths.push(path.map(String).join("."));
    return standIn(path);
  }
  if (Array.isArray(value)) return value.map((item, i) => withStandIns(item, [...path, i], unknownPaths));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, withStandIns(item, [...path, key], unknownPaths)]),
    );
  }
  return value;
}

/** The same body as the old inputs': validated when that agent was created, so not again. */
function unchanged(kind: AgentKind, olds: Props, news: Props): boolean {
  const body = requestBody(kind, news);
  if (containsUnknown(body)) return false;
  return FIELDS[kind].every((field) => isDeepStrictEqual(normalize(olds[field]), normalize(news[field])));
}

/**
 * Validates the body that will be sent. A value not yet known (first preview) gets its field's
 * stand-in, and no failure is reported at or under an unknown value: the engine checks again
 * once it is known. An unchanged body is not validated again (the program has validated the
 * files; this guards bodies built in code), so a no-op preview loads no schema.
 */
export async function checkAgent(kind: AgentKind, olds: Props, news: Props) {
  if (unchanged(kind, olds, news)) return { inputs: news, failures: [] };
  const { createConversationalAgentRequest, createProceduralAgentRequest } = await import("../contract/index.ts");
  const schema = kind === "conversational" ? createConversationalAgentRequest : createProceduralAgentRequest;
  const unknownPaths: string[] = [];
  const known = withStandIns(requestBody(kind, news), [], unknownPaths);
  const result = schema.safeParse(known);
  if (result.success) return { inputs: news, failures: [] };
  const underUnknown = (property: string) =>
    unknownPaths.some((p) => property === p || property.startsWith(`${p}.`) || p.startsWith(`${property}.`));
  // An agent file's words (unknown keys with "did you mean"), and no property: the engine would print
  // the value at a named property (a whole config as a Go map, or `{<nil>}` for a nested path).
  const { fieldProblems } = await import("../definitions/index.ts");
  const failures = fieldProblems(schema, result.error.issues)
    .filter((problem) => !underUnknown(problem.path.map(String).join(".")))
    .map((problem) => ({ property: "", reason: `${problem.field}: ${problem.message}` }));
  return { inputs: news, failures };
}

function isDigests(value: unknown): value is Digests {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Compares what would be sent with what was sent, over the fields of this kind's request body.
 * `olds` are the stored outputs: since this layout, the ids and a digest per field (`digests`);
 * a stack deployed before it holds the whole body there instead, compared field by field. Every
 * changed field is a replacement: the service documents creation only, so a change means a new
 * agent (created before the old one is dropped from the stack). `__provider` (the serialized code)
 * is never compared, so upgrading agent-iac replaces nobody's agents.
 */
export function diffAgent(kind: AgentKind, olds: Props, news: Props) {
  const stored = isDigests(olds.digests) ? olds.digests : undefined;
  const changed = (field: string) => {
    if (containsUnknown(news[field])) return true;
    const value = normalize(news[field]);
    if (stored) return stored[field] !== (value === undefined ? undefined : digest(value));
    return !isDeepStrictEqual(normalize(olds[field]), value);
  };
  const replaces = FIELDS[kind].filter(changed);
  return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
}
