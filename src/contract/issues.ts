// A schema failure in words for a reader, on one line: each issue as `field: message`, the first
// few of them. zod's own text (`z.prettifyError`) spans lines (`✖ …\n  → at …`), which every
// surface that shows service text escapes, so a user read a literal `\n` between the issues.
import type { z } from "zod";

/** `data[0].id: expected string, received number; data[0].status: …; and 3 more`. */
export function issuesText(error: z.ZodError, limit = 5): string {
  const path = (segments: readonly PropertyKey[]) =>
    segments.reduce<string>(
      (text, segment) =>
        typeof segment === "number" ? `${text}[${segment}]` : `${text}${text ? "." : ""}${String(segment)}`,
      "",
    );
  const one = (issue: z.core.$ZodIssue) => {
    const message = issue.message.replace(/^Invalid input: /, "").replace(/\s*\n\s*/g, " ");
    const where = path(issue.path);
    return where ? `${where}: ${message}` : message;
  };
  const shown = error.issues.slice(0, limit).map(one);
  const more = error.issues.length - shown.length;
  return `${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}`;
}
