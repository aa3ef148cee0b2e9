// The errors of a connection to the service said in the project's words, for every command that
// talks to it (the client itself comes from the command lifecycle, ./lifecycle.ts). Light on
// purpose: the lifecycle loads it for every command, `--help` and `validate` included.
import { AuthenticationError, ConnectionError } from "../api/index.ts";
import { CliError } from "../errors/index.ts";
import { terminalText } from "../render/index.ts";
import type { Connection } from "../settings/index.ts";

/** A connection failure or a refused key, with what to do about it; anything else unchanged. */
export function explainServiceError(error: unknown, connection: Connection): unknown {
  if (error instanceof ConnectionError && !error.requestSent && connection.loopback) {
    return new CliError(`nothing answers at ${connection.baseUrl} (${error.code ?? "connection failed"})`, 3, {
      cause: error,
      hint: "start the local simulator in another terminal with `npm run service` (or run `npm start`, which starts its own)",
    });
  }
  if (error instanceof AuthenticationError) {
    return new CliError(
      `the service refused the API key from ${connection.keySource ?? "nowhere"}: ${terminalText(error.message)}`,
      2,
      {
        cause: error,
        hint: "check the stack's secret agents:apiKey or AGENT_IAC_API_KEY",
      },
    );
  }
  return error;
}
