// The time windows of watch and audit: `--since 24h`, or `--from T --to T`; the baseline window
// is the one of equal length just before (or the same window, for versions that take calls side
// by side). Windows are half-open, [from, to), like the interface's `_gte` / `_lt` filters.
import { type InputField, InvalidInputError } from "../errors/index.ts";

export type Window = { from: Date; to: Date };

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "90m", "24h", "7d", "1h30m" → milliseconds; an InvalidInputError naming the field otherwise. */
export function parseDuration(text: string, field: InputField = "since"): number {
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)\s*([smhdw])/gi)];
  const joined = parts.map((p) => p[0]).join("");
  if (parts.length === 0 || joined.replace(/\s/g, "") !== text.replace(/\s/g, "")) {
    throw new InvalidInputError(
      (name) => `${name(field)} must be a duration such as 30m, 24h, 7d or 1h30m, not "${text}"`,
      {
        field,
        value: text,
      },
    );
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[(p[2] ?? "").toLowerCase()] ?? 0), 0);
  if (ms <= 0) {
    throw new InvalidInputError((name) => `${name(field)} must be longer than zero, not "${text}"`, {
      field,
      value: text,
    });
  }
  return ms;
}

function parseTime(text: string, field: "from" | "to"): Date {
  // Only ISO 8601 date-times (or dates): Date.parse would read "3" or "May 1" too.
  const iso = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;
  const date = new Date(text);
  if (!iso.test(text.trim()) || Number.isNaN(date.getTime())) {
    throw new InvalidInputError(
      (name) => `${name(field)} must be an ISO 8601 date-time such as 2026-11-23T08:00:00Z, not "${text}"`,
      { field, value: text },
    );
  }
  return date;
}

export type WindowFlags = { since?: string | undefined; from?: string | undefined; to?: string | undefined };

/** The window the flags ask for (default: the last `defaultSince`). */
export function resolveWindow(flags: WindowFlags, defaultSince: string, now = new Date()): Window {
  if (flags.since !== undefined && (flags.from !== undefined || flags.to !== undefined)) {
    throw new InvalidInputError((name) => `give either ${name("since")} or ${name("from")}/${name("to")}, not both`, {
      field: "since",
      value: flags.since,
    });
  }
  if (flags.from !== undefined || flags.to !== undefined) {
    if (flags.from === undefined) {
      throw new InvalidInputError((name) => `${name("to")} needs ${name("from")}`, { field: "to", value: flags.to });
    }
    const from = parseTime(flags.from, "from");
    const to = flags.to === undefined ? now : parseTime(flags.to, "to");
    if (to.getTime() <= from.getTime()) {
      throw new InvalidInputError((name) => `${name("to")} must be later than ${name("from")}`, {
        field: "to",
        value: flags.to,
      });
    }
    return { from, to };
  }
  const length = parseDuration(flags.since ?? defaultSince);
  return { from: new Date(now.getTime() - length), to: now };
}

/** The window of equal length that ends where `window` starts. */
export function previousWindow(window: Window): Window {
  const length = window.to.getTime() - window.from.getTime();
  return { from: new Date(window.from.getTime() - length), to: window.from };
}

/** The interface's date filters for a window. */
export function createdIn(window: Window): { created_at_gte: string; created_at_lt: string } {
  return { created_at_gte: window.from.toISOString(), created_at_lt: window.to.toISOString() };
}
