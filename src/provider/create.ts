// Creating an agent: the only method that talks to the service, so the only one that loads the
// client (imported by the runtime when a create runs, never for a preview).
import * as pulumi from "@pulumi/pulumi";
import { createClient, type RetryNotice } from "../api/index.ts";
import { retryLine } from "../errors/index.ts";
import { requireConnection, resolveConnection } from "../settings/index.ts";
import { bodyDigests, type Props, requestBody } from "./body.ts";
import type { AgentKind, ConfiguredProvider } from "./index.ts";

const clients = new Map<string, ReturnType<typeof createClient>>();

/** Connection settings through the one resolver (stack config, environment, local dev key). */
export function resolveSettings(provider: ConfiguredProvider) {
  // The dynamic provider's own process, started by the CLI with the run's environment: a process entry.
  return requireConnection(resolveConnection((key) => provider.config?.get(key), process.env));
}

/** A retried request leaves one line in `pulumi up`'s output. */
function logRetry(notice: RetryNotice): void {
  pulumi.log.info(retryLine(notice));
}

/**
 * Sends the body and keeps, as outputs, the ids and a digest per field: the body itself is in the
 * inputs already, and the engine rewrites the whole state after every step, so it is stored once.
 */
export async function createAgent(kind: AgentKind, provider: ConfiguredProvider, inputs: Props) {
  const resolved = resolveSettings(provider);
  const cacheKey = JSON.stringify([resolved.baseUrl, resolved.serviceVersion, resolved.apiKey]);
  let client = clients.get(cacheKey);
  if (!client) {
    client = createClient({ ...resolved, onRetry: logRetry });
    clients.set(cacheKey, client);
  }
  const body = requestBody(kind, inputs);
  try {
    const created =
      kind === "conversational"
        ? await client.conversationalAgents.create(body as never)
        : await client.proceduralAgents.create(body as never);
    return {
      id: created.id,
      outs: { agentId: created.id, versionId: created.version_id, digests: bodyDigests(kind, body) },
    };
  } catch (error) {
    throw await explainCreateFailure(kind, String(body.name), error);
  }
}

/**
 * Turns a failed create into a message that says what state the service may be in. The typed API
 * error stays as `cause` (status, request id, attempts, body) for whoever handles it. Only the
 * client's connection and timeout errors carry `requestSent`.
 */
export async function explainCreateFailure(kind: AgentKind, name: string, error: unknown): Promise<Error> {
  const what = `${kind} agent "${name}"`;
  // The service's words reach a terminal through Pulumi's log: shown escaped, on one line. The
  // escaper's module is loaded on a failure only: a provider process loads no more than it needs.
  const { terminalText } = await import("../escape/index.ts");
  const reason = terminalText(error instanceof Error ? error.message : String(error));
  if ((error as { requestSent?: unknown } | null)?.requestSent === true) {
    return new Error(
      `the service may have created ${what}: ${reason}. The request had been sent when the connection failed, ` +
        "so it was not retried (a retry could create a duplicate). If an agent with that name exists on the " +
        'service, it is not tracked by this stack; see README "Failures and recovery".',
      { cause: error },
    );
  }
  return new Error(`could not create ${what}: ${reason}`, { cause: error });
}
