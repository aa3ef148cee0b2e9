// Path ids are encoded by this one helper, never concatenated: an id with `/`, `?` or `#` stays one
// path segment, and `.`/`..` (which URL resolution would collapse) are refused.

/** Encodes one path segment. */
function encodePathSegment(value: string): string {
  if (typeof value !== "string" || value === "" || value === "." || value === "..") {
    throw new TypeError(`invalid path parameter ${JSON.stringify(value)}`);
  }
  return encodeURIComponent(value);
}

/** Tagged template for request paths: pathFor`/conversations/${id}/events`. */
export function pathFor(strings: TemplateStringsArray, ...params: string[]): string {
  let out = strings[0] ?? "";
  params.forEach((param, i) => {
    out += encodePathSegment(param) + (strings[i + 1] ?? "");
  });
  return out;
}
