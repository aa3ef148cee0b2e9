// The sockets the service client opens while a use case runs, from undici's diagnostics channel
// (published by undici itself): a test asks whether each was closed when the use case returned.
import diagnostics from "node:diagnostics_channel";
import type { Socket } from "node:net";

/** Runs `body`, recording every socket an undici client connects meanwhile. */
export async function socketsDuring<T>(
  body: () => Promise<T>,
): Promise<{ result: T | undefined; error: unknown; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const listen = (message: unknown) => {
    sockets.push((message as { socket: Socket }).socket);
  };
  diagnostics.subscribe("undici:client:connected", listen);
  try {
    return { result: await body(), error: undefined, sockets };
  } catch (error) {
    return { result: undefined, error, sockets };
  } finally {
    diagnostics.unsubscribe("undici:client:connected", listen);
  }
}
