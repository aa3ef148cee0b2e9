// `agent-iac service` (`npm run service`): runs the local simulator of the service until SIGINT or
// SIGTERM, then stops cleanly (open streams closed, persisted state flushed; exit 3 when the last
// write of the data file failed).
import { CliError, ConfigError, ServiceError } from "../errors/index.ts";
import { DEV_API_KEY, PROFILE_NAMES, type ProfileName, startSimulator } from "../simulator/index.ts";
import { parseCommand, usageText } from "./args.ts";
import type { CommandIO } from "./lifecycle.ts";

const SPEC = {
  name: "service",
  about: `Runs the local simulator of the service (every operation of the service interface, plus the
simulator-only routes under /_simulator/; see src/simulator/README.md).`,
  flags: {
    host: { type: "string", default: "127.0.0.1", arg: "HOST", help: "address to listen on (default 127.0.0.1)" },
    port: { type: "string", default: "8787", arg: "PORT", help: "port (default 8787; 0 picks a free one, printed)" },
    data: {
      type: "string",
      arg: "FILE",
      help: "keep agents, conversations, procedures and feedbacks in FILE across restarts (its directory must exist; one simulator per file: FILE.lock names the holder)",
    },
    profile: {
      type: "string",
      default: "default",
      arg: "NAME",
      help: "default | variant: the value taken for each choice the interface leaves open (variant: the other legal value of each; see src/simulator/README.md)",
    },
    "api-key": {
      type: "string",
      arg: "KEY",
      help: "the API key clients must send (prefer AGENT_IAC_API_KEY: process arguments are visible to other users); default: the documented local dev key, which is refused on a non-loopback host",
    },
    "latency-ms": { type: "string", arg: "MS", help: "added before handling every request (default 0)" },
    "event-delay-ms": { type: "string", arg: "MS", help: "delay between two events of a conversation (default 10)" },
    "page-size": { type: "string", arg: "N", help: "items per list page (default 20)" },
    "token-ttl-ms": {
      type: "string",
      arg: "MS",
      help: "lifetime of a conversation's stream token (default 900000 = 15 min)",
    },
  },
} as const;

const numeric = (name: string, value: string | undefined, min: number): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new CliError(`--${name} must be an integer ≥ ${min}, got "${value}"`, { hint: usageText(SPEC) });
  }
  return n;
};

export async function run(argv: string[], io: CommandIO): Promise<number> {
  const parsed = parseCommand(SPEC, argv, io.stdout);
  if (!parsed) return 0;
  const { values } = parsed;
  if (!PROFILE_NAMES.includes(values.profile as ProfileName)) {
    throw new CliError(`--profile must be one of ${PROFILE_NAMES.join(", ")}, got "${values.profile}"`);
  }
  const port = numeric("port", values.port, 0) as number;
  if (port > 65535) throw new CliError(`--port must be at most 65535, got "${values.port}"`);
  const apiKey = values["api-key"] || io.env.AGENT_IAC_API_KEY || DEV_API_KEY;
  const keySource = values["api-key"]
    ? "from --api-key"
    : io.env.AGENT_IAC_API_KEY
      ? "from AGENT_IAC_API_KEY"
      : "the documented local dev key (see src/simulator/README.md)";
  const options = {
    host: values.host,
    port,
    apiKey,
    ...(values.data ? { dataFile: io.project.path(values.data) } : {}),
    cwd: io.project.dir,
    profile: values.profile as ProfileName,
    latencyMs: numeric("latency-ms", values["latency-ms"], 0),
    eventDelayMs: numeric("event-delay-ms", values["event-delay-ms"], 0),
    pageSize: numeric("page-size", values["page-size"], 1),
    tokenTtlMs: numeric("token-ttl-ms", values["token-ttl-ms"], 1),
  };
  const simulator = await startSimulator(
    Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as typeof options,
  ).catch((error: NodeJS.ErrnoException) => {
    const code = error.code;
    const busy = code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL";
    // A busy or forbidden address is the service failing to start (3); anything else, its settings (2).
    throw busy ? new ServiceError(error.message, { cause: error }) : new ConfigError(error.message, { cause: error });
  });

  io.stdout.write(
    `agent-iac service: listening on ${simulator.url} (service id ${simulator.serviceId})\n` +
      `profile: ${simulator.profile}\n` +
      `API key: ${keySource}\n` +
      "press Ctrl+C to stop\n",
  );
  const signal = await io.untilInterrupted();
  await simulator.close();
  const failed = simulator.persistenceError();
  if (failed) {
    io.stderr.write(`agent-iac service: stopped (${signal}), but the data file was not saved: ${failed}\n`);
    return 3;
  }
  io.stdout.write(`agent-iac service: stopped (${signal})\n`);
  return 0;
}
