// Error answers of the simulator: one JSON shape, `{error: {type, message, field?, request_id}}`,
// made from a status and a short reason. The interface leaves error bodies open; this shape is
// what the client's error factory reads (`error.message`).
import type { z } from "zod";

export class HttpError extends Error {
  readonly status: number;
  readonly type: string;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, options: { field?: string; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.type = errorType(status);
    this.field = options.field;
    this.headers = options.headers ?? {};
  }
}

export function errorType(status: number): string {
  if (status === 400) return "invalid_request";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  if (status >= 500) return "server_error";
  return "error";
}

export function errorBody(status: number, message: string, requestId: string, field?: string) {
  return {
    error: { type: errorType(status), message, ...(field === undefined ? {} : { field }), request_id: requestId },
  };
}

/** Validates with a shared schema; a failure is a 400 naming the first field at fault. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, where: "body" | "query"): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const name = (path: readonly PropertyKey[]) => (path.length ? path.map(String).join(".") : where);
  const described = result.error.issues.map((issue) => {
    // An unknown key is named itself, not its parent object.
    const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0] ?? ""] : issue.path;
    const message = issue.code === "unrecognized_keys" ? "unknown field" : issue.message;
    return { field: name(path), text: `${name(path)}: ${message}` };
  });
  const message = described
    .slice(0, 5)
    .map((d) => d.text)
    .join("; ");
  throw new HttpError(400, message, { field: described[0]?.field ?? where });
}
