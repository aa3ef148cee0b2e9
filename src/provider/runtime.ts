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
  TimeoutError,
} from "../api/index.ts";
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
export function requestBody(kind: AgentKind, props: Props): Props {
  const body: Props = {};
  for (const field of FIELDS[kind]) {
    if (props[field] !== undefined) body[field] = props[field];
  }
  return body;
}

/** Validates the body that will be sent. Unknown values (first preview) are accepted as they are. */
export function checkAgent(kind: AgentKind, _olds: Props, news: Props) {
  const body = requestBody(kind, news);
  // Stand-ins that satisfy the schema where a value is not yet known.
  const known = JSON.parse(JSON.stringify(body), (_key, value) => (value === UNKNOWN ? "pa_unknown" : value));
  if (containsUnknown(body.name) || containsUnknown(body.description)) return { inputs: news };
  const result = SCHEMAS[kind].safeParse(known);
  const failures = result.success
    ? []
    : result.error.issues.map((issue) => ({
        property: issue.path.map(String).join(".") || "config",
        reason: issue.message,
      }));
  return { inputs: news, failures };
}

/**
 * Compares what would be sent with what was sent. Every changed field is a replacement: the
 * service documents creation only, so a change means a new agent (created before the old one is
 * dropped from the stack). `__provider` (the serialized code) is never compared, so upgrading
 * agent-iac replaces nobody's agents.
 */
export function diffAgent(olds: Props, news: Props) {
  const fields = new Set([...FIELDS.conversational].filter((f) => f in olds || f in news));
  const replaces = [...fields].filter(
    (field) => containsUnknown(news[field]) || !isDeepStrictEqual(normalize(olds[field]), normalize(news[field])),
  );
  return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
}

/** Absent and empty lists mean the same to the service. */
function normalize(value: unknown): unknown {
  return Array.isArray(value) && value.length === 0 ? undefined : value;
}

const clients = new Map<string, ReturnType<typeof createClient>>();

/** Connection settings from stack config, else the environment; a missing key is a clear error. */
export function resolveSettings(provider: ConfiguredProvider) {
  const config = provider.config;
  const baseUrl = config?.get("agents:baseUrl") || process.env.AGENT_IAC_BASE_URL;
  const apiKey = config?.get("agents:apiKey") || process.env.AGENT_IAC_API_KEY;
  const serviceVersion = config?.get("agents:serviceVersion");
  if (!baseUrl) {
    throw new Error("no service address: set the stack config agents:baseUrl or the AGENT_IAC_BASE_URL variable");
  }
  if (!apiKey) {
    throw new Error(
      "no API key: set it with `pulumi config set --secret agents:apiKey` or the AGENT_IAC_API_KEY variable",
    );
  }
  return { baseUrl, apiKey, serviceVersion: serviceVersion || undefined };
}

export async function createAgent(kind: AgentKind, provider: ConfiguredProvider, inputs: Props) {
  const resolved = resolveSettings(provider);
  const cacheKey = JSON.stringify([resolved.baseUrl, resolved.serviceVersion, resolved.apiKey]);
  let client = clients.get(cacheKey);
  if (!client) {
    client = createClient(resolved);
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

/** Turns a failed create into a message that says what state the service may be in. */
export function explainCreateFailure(kind: AgentKind, name: string, error: unknown): Error {
  const what = `${kind} agent "${name}"`;
  const reason = error instanceof Error ? error.message : String(error);
  if ((error instanceof ConnectionError || error instanceof TimeoutError) && error.requestSent) {
    return new Error(
      `the service may have created ${what}: ${reason}. The request had been sent when the connection failed, ` +
        "so it was not retried (a retry could create a duplicate). If an agent with that name exists on the " +
        'service, it is not tracked by this stack; see README "Failures and recovery".',
    );
  }
  return new Error(`could not create ${what}: ${reason}`);
}
