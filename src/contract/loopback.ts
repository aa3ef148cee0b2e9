// Loopback addresses: where the local simulator may serve with its public dev key, where it delivers
// post_url requests, and which Host headers it answers (a DNS-rebinding defence). One list for the
// simulator and the commands.

/** The usual names of this machine, as URL hostnames (what `npm start` treats as "the local simulator"). */
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** A URL hostname (or a bare host) that names this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name);
}

/** The hostname of a `Host` header value (`name:port`, `[v6]:port`), lower case. */
export function hostHeaderName(value: string): string {
  const trimmed = value.trim().toLowerCase();
  if (trimmed.startsWith("[")) return trimmed.slice(0, trimmed.indexOf("]") + 1);
  const colon = trimmed.lastIndexOf(":");
  return colon === -1 ? trimmed : trimmed.slice(0, colon);
}
