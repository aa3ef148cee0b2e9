// Creating an agent: the only method that talks to the service, so the only one that loads the
// client (imported by the runtime when a create runs, never for a preview).
import * as pulumi from "@pulumi/pulumi";
import { createClient, type RetryNotice } from "../api/index.ts";
import { retryLine } from "../errors/index.ts";
import { requireConnection, resolveConnection } from "../settings/index.ts";
import { bodyDigests, type Props, requestBody } from "./body.ts";
import type { AgentKind, ConfiguredProvider } from "./index.ts";
import { explainCreateFailure } from "./runtime.ts";

const clients = new Map<string, ReturnType<typeof createClient>>();

/** Connection settings through the one resolver (stack config, environment, local dev key). */
export function resolveSettings(provider: ConfiguredProvider) {
  return requireConnection(resolveConnection((key) => provider.config?.get(key)));
}

/** A retried request leaves one line in `pulumi up`'s output. */
export function logRetry(notice: RetryNotice): void {
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
    throw explainCreateFailure(kind, String(body.name), error);
  }
}
