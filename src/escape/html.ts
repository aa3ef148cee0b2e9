// Markup built only through the `html` tag: every interpolated value is escaped unless it is
// itself markup made by the tag, so text from the service (agent messages, tool arguments, error
// bodies) can never become markup by mistake.

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for element content and quoted attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => escapes[c] ?? c);
}

/** A piece of markup the tag built (or a constant of this module's own). */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** Values a template may hold: markup, text, numbers, lists of them; null/undefined/false render nothing. */
export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false || value === true) return "";
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; nested `html` results are kept as markup. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as HtmlValue) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Markup this module wrote itself (the stylesheet, the script): never pass service text here. */
export function trusted(markup: string): Html {
  return new Html(markup);
}
