// The implementation behind the dynamic providers' check, diff and create. Loaded by module name
// ("agent-iac/provider-runtime") inside the provider host when a method runs, so nothing here is
// serialized into the state. No top-level side effects.
import { isDeepStrictEqual } from "node:util";
import * as pulumi from "@pulumi/pulumi";
import type { z } from "zod";
import {
  ConnectionError,
  createClient,
  createConversationalAgentRequest,
  createProceduralAgentRequest,
  type RetryNotice,
  TimeoutError,
} from "../api/index.ts";
import { retryLine } from "../errors/index.ts";
import { requireConnection, resolveConnection } from "../settings/index.ts";
import type { AgentKind, ConfiguredProvider } from "./index.ts";

/** Pulumi's placeholder for a value not known until apply (e.g. the id of an agent not yet created). */
const UNKNOWN = pulumi.runtime.unknownValue;

/** Exactly the request body: only these inputs are sent, compared and stored. */
const FIELDS: Record<AgentKind, readonly string[]> = {
  conversational: ["name", "description", "config", "postprocess_agents"],
  procedural: ["name", "description", "config"],
};

const SCHEMAS: Record<AgentKind, z.ZodType> = {
  conversational: createConversationalAgentRequest,
  procedural: createProceduralAgentRequest,
};

type Props = Record<string, unknown>;

function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

/** The request body held in a set of inputs or outputs (undefined fields dropped). */
function requestBody(kind: AgentKind, props: Props): Props {
  const body: Props = {};
  for (const field of FIELDS[kind]) {
    if (props[field] !== undefined) body[field] = props[field];
  }
  return body;
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

/**
 * Validates the body that will be sent. A value not yet known (first preview) gets its field's
 * stand-in, and no failure is reported at or under an unknown value: the engine checks again
 * once it is known.
 */
export function checkAgent(kind: AgentKind, _olds: Props, news: Props) {
  const unknownPaths: string[] = [];
  const known = withStandIns(requestBody(kind, news), [], unknownPaths);
  const result = SCHEMAS[kind].safeParse(known);
  const underUnknown = (property: string) =>
    unknownPaths.some((p) => property === p || property.startsWith(`${p}.`) || p.startsWith(`${property}.`));
  const failures = result.success
    ? []
    : result.error.issues
        .map((issue) => ({ property: issue.path.map(String).join(".") || "config", reason: issue.message }))
        .filter((failure) => !underUnknown(failure.property));
  return { inputs: news, failures };
}

/**
 * Compares what would be sent with what was sent, over the fields of this kind's request body.
 * Every changed field is a replacement: the service documents creation only, so a change means a
 * new agent (created before the old one is dropped from the stack). `__provider` (the serialized
 * code) is never compared, so upgrading agent-iac replaces nobody's agents.
 */
export function diffAgent(kind: AgentKind, olds: Props, news: Props) {
  const fields = FIELDS[kind].filter((f) => f in olds || f in news);
  const replaces = fields.filter(
    (field) => containsUnknown(news[field]) || !isDeepStrictEqual(normalize(olds[field]), normalize(news[field])),
  );
  return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/** Absent and empty lists mean the same to the service. */
function normalize(value: unknown): unknown {
  return Array.isArray(value) && value.length === 0 ? undefined : value;
}

const clients = new Map<string, ReturnType<typeof createClient>>();

/** Connection settings through the one resolver (stack config, environment, local dev key). */
export function resolveSettings(provider: ConfiguredProvider) {
  return requireConnection(resolveConnection((key) => provider.config?.get(key)));
}

/** A retried request leaves one line in `pulumi up`'s output. */
export function logRetry(notice: RetryNotice): void {
  pulumi.log.info(retryLine(notice));
}

export async function createAgent(kind: AgentKind, provider: ConfiguredProvider, inputs: Props) {
  const resolved = resolveSettings(provider);
  const cacheKey = JSON.stringify([resolved.baseUrl, resolved.serviceVersion, resolved.apiKey]);
  let client = clients.get(cacheKey);
  if (!client) {
    client = createClient({ ...resolved, onRetry: logRetry });
    clients.set(cacheKey, client);
  }
  const body = requestBody(kind, inputs);
  const name = String(body.name);
  try {
    const created =
      kind === "conversational"
        ? await client.conversationalAgents.create(body as never)
        : await client.proceduralAgents.create(body as never);
    return { id: created.id, outs: { ...body, agentId: created.id, versionId: created.version_id } };
  } catch (error) {
    throw explainCreateFailure(kind, name, error);
  }
}

/**
 * Turns a failed create into a message that says what state the service may be in. The typed API
 * error stays as `cause` (status, request id, attempts, body) for whoever handles it.
 */
export function explainCreateFailure(kind: AgentKind, name: string, error: unknown): Error {
  const what = `${kind} agent "${name}"`;
  const reason = error instanceof Error ? error.message : String(error);
  if ((error instanceof ConnectionError || error instanceof TimeoutError) && error.requestSent) {
    return new Error(
      `the service may have created ${what}: ${reason}. The request had been sent when the connection failed, ` +
        "so it was not retried (a retry could create a duplicate). If an agent with that name exists on the " +
        'service, it is not tracked by this stack; see README "Failures and recovery".',
      { cause: error },
    );
  }
  return new Error(`could not create ${what}: ${reason}`, { cause: error });
}
