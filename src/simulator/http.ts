// Errors of the simulator: an HttpError (status, short reason, the request field at fault) thrown
// anywhere and answered in the profile's error shape by the error handlers (errors.ts).
import type { z } from "zod";

export class HttpError extends Error {
  readonly status: number;
  readonly field: string | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, options: { field?: string; headers?: Record<string, string> } = {}) {
    super(message);
    this.status = status;
    this.field = options.field;
    this.headers = options.headers ?? {};
  }
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
