// What an agent resource sends, stores and compares: the request body, and a digest per field.
// Pure and light (node:crypto only): the provider host loads this for every check and diff.
import { createHash } from "node:crypto";
import * as pulumi from "@pulumi/pulumi";
import type { AgentKind } from "./index.ts";

/** Pulumi's placeholder for a value not known until apply (e.g. the id of an agent not yet created). */
export const UNKNOWN = pulumi.runtime.unknownValue;

/** Exactly the request body: only these inputs are sent, compared and stored. */
export const FIELDS: Record<AgentKind, readonly string[]> = {
  conversational: ["name", "description", "config", "postprocess_agents"],
  procedural: ["name", "description", "config"],
};

export type Props = Record<string, unknown>;

/** A field's digest, per field of the body: what the outputs keep instead of a second copy of the body. */
export type Digests = Record<string, string>;

export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

/** Absent and empty lists mean the same to the service. */
export function normalize(value: unknown): unknown {
  return Array.isArray(value) && value.length === 0 ? undefined : value;
}

/** The request body held in a set of inputs or outputs (undefined fields dropped). */
export function requestBody(kind: AgentKind, props: Props): Props {
  const body: Props = {};
  for (const field of FIELDS[kind]) {
    if (props[field] !== undefined) body[field] = props[field];
  }
  return body;
}

/** JSON with object keys sorted: the same value digests the same whatever order its keys arrive in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** 96 bits of SHA-256: enough to tell a changed field from an unchanged one, short in the state. */
export function digest(value: unknown): string {
  return createHash("sha256").update(canonical(value)).digest("base64url").slice(0, 16);
}

/** The digest of each field of the body that is present (an empty link list counts as absent). */
export function bodyDigests(kind: AgentKind, props: Props): Digests {
  const digests: Digests = {};
  for (const field of FIELDS[kind]) {
    const value = normalize(props[field]);
    if (value !== undefined) digests[field] = digest(value);
  }
  return digests;
}
