// The caller's control messages. The interface shows no shape for them ("accepts control messages
// sent to the agent. Shapes of the control messages: not shown"), so the shape is the team's
// configuration, never an invented field: `agents:callerMessage`, a JSON template with `{{text}}`
// where the line goes (JSON-escaped), and optionally `agents:callerEnd`, the message that ends the
// call after the last turn. On a loopback address the simulator's shapes are the default.
import { ConfigError } from "../errors/index.ts";
import { CALLER_KEYS, type CallerShapeSettings, isLoopbackUrl } from "../settings/index.ts";

/** How a caller's line and the end of the call are sent on the session. */
export type CallerShape = {
  /** The line's control message. */
  message(text: string): Record<string, unknown>;
  /** The message that ends the call after the last turn, if the team gave one. */
  end: Record<string, unknown> | undefined;
  /** Where the shape came from (for the run's notes): the setting, or the simulator's default. */
  source: "settings" | "simulator default";
};

/** The local simulator's shapes (docs/simulator.md, the `default` profile): the loopback default. */
const SIMULATOR_CALLER_SHAPE = {
  message: '{"type": "user.message", "text": "{{text}}"}',
  end: '{"type": "end"}',
} as const;

const PLACEHOLDER = "{{text}}";

function jsonObject(text: string, setting: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${setting} is not JSON once the line is put in (${(error as Error).message})`, {
      hint: `write it as a JSON object with ${PLACEHOLDER} inside a string, e.g. ${SIMULATOR_CALLER_SHAPE.message}`,
    });
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError(`${setting} must be a JSON object (a control message)`);
  }
  return value as Record<string, unknown>;
}

/** The template with the line JSON-escaped in place of every `{{text}}`. */
function fill(template: string, text: string): string {
  const escaped = JSON.stringify(text).slice(1, -1);
  return template.split(PLACEHOLDER).join(escaped);
}

/**
 * The caller's shape for a service at `baseUrl`: the settings', else the simulator's on a loopback
 * address; elsewhere a ConfigError naming the setting (the interface does not show the shape).
 */
export function callerShape(settings: CallerShapeSettings, baseUrl: string, stack?: string): CallerShape {
  const loopback = isLoopbackUrl(baseUrl);
  const on = stack ? ` on stack ${stack}` : "";
  // The end message is half of the team's shape: alone, the simulator's default would silently replace it.
  if (settings.end !== undefined && settings.message === undefined) {
    throw new ConfigError(
      `${CALLER_KEYS.end.config} (or ${CALLER_KEYS.end.env}) is set${on} but ${CALLER_KEYS.message.config} is not: the end message is part of the caller's message shape and is never sent without it. Nothing was called.`,
      {
        hint: `set ${CALLER_KEYS.message.config} too (a JSON object with ${PLACEHOLDER} where the line goes), or remove ${CALLER_KEYS.end.config} to use ${loopback ? "the simulator's shapes" : "no end message"}`,
      },
    );
  }
  if (settings.message === undefined && !loopback) {
    throw new ConfigError(
      `a scenario has a caller, but ${CALLER_KEYS.message.config} is not set${on}: the service's interface does not show the shape of the session's control messages, so the team names it. Nothing was called.`,
      {
        hint: `pulumi config set ${CALLER_KEYS.message.config} '{"type": "…", "text": "${PLACEHOLDER}"}' (the shape your service accepts; ${PLACEHOLDER} is where the line goes), and optionally ${CALLER_KEYS.end.config}`,
      },
    );
  }
  const message = settings.message ?? SIMULATOR_CALLER_SHAPE.message;
  const end = settings.message === undefined ? SIMULATOR_CALLER_SHAPE.end : settings.end;
  const messageSetting = settings.message === undefined ? "the simulator's caller message" : CALLER_KEYS.message.config;
  if (!message.includes(PLACEHOLDER)) {
    throw new ConfigError(`${messageSetting} has no ${PLACEHOLDER}: say where the caller's line goes`);
  }
  // Checked once with a line that needs escaping, so a template that breaks on one fails here.
  jsonObject(fill(message, 'a "quoted" line\\ with a break\n'), messageSetting);
  return {
    message: (text) => jsonObject(fill(message, text), messageSetting),
    end: end === undefined ? undefined : jsonObject(end, CALLER_KEYS.end.config),
    source: settings.message === undefined ? "simulator default" : "settings",
  };
}
