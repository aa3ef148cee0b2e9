// The use cases' one way to talk to the stack's service: a client on its connection, opened by the
// use case that needs it and closed when that use case ends (the commands get no client).
import { type Client, createClient, type RetryNotice } from "../api/index.ts";
import { type Connection, type ResolvedConnection, requireConnection } from "../settings/index.ts";

/** Told of each retried request (the command says it on stderr). */
export type RetryListener = (notice: RetryNotice) => void;

/** Runs `body` with a client on `target` (a stream opened with its own token needs no key), closed after it. */
export async function withClient<T>(
  target: ResolvedConnection | { baseUrl: string; apiKey?: undefined },
  onRetry: RetryListener | undefined,
  body: (client: Client) => Promise<T>,
): Promise<T> {
  const client = createClient({ ...target, ...(onRetry ? { onRetry } : {}) });
  try {
    return await body(client);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** Runs `body` with a client on the stack's connection (a ConfigError naming the stack when it lacks an address or a key). */
export function withStackClient<T>(
  connection: Connection,
  stack: string,
  onRetry: RetryListener | undefined,
  body: (client: Client) => Promise<T>,
): Promise<T> {
  return withClient(requireConnection(connection, stack), onRetry, body);
}
