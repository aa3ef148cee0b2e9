// Personal data out of what a model is sent and what is printed: phone numbers, e-mail addresses,
// card numbers (the org rules' own detectors, src/policy) and account numbers, and the channel's
// numbers become labelled placeholders (`<phone 1>`,
// `<email 1>`, `<card 1>`, `<account 1>`, `<callee_no>`, `<caller_no>`), the same value always the
// same label, so the model still reads who gave which number. Numbers the agent file itself holds
// (its scenarios' channels, its transfers) are the team's, not a caller's, and stay.
import { type PersonalKind, personalData } from "../policy/index.ts";

type PiiKind = PersonalKind | "account";

/** An IBAN, or a run of 6 or more digits the policy's detectors left (an account, a customer or a policy number). */
const ACCOUNT = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b|(?<![\w<])\d(?:[ -]?\d){5,}(?![\w>])/g;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

const digitsOf = (text: string) => text.replace(/\D/g, "");

export class Scrubber {
  /** Every value replaced, by its normalized form, with its label. */
  readonly #labels = new Map<string, string>();
  readonly #counts = new Map<PiiKind, number>();
  /** Numbers (their digits) that are the team's own. */
  readonly #own: Set<string>;
  readonly #keep: boolean;

  /** `own`: numbers the agent file holds; `keep`: replace nothing (`--keep-pii`). */
  constructor(options: { own?: readonly string[]; keep?: boolean } = {}) {
    this.#own = new Set((options.own ?? []).map(digitsOf).filter((d) => d.length > 0));
    this.#keep = options.keep ?? false;
  }

  /** The channel's numbers get their own labels (unless the agent file holds them). */
  channel(channel: { callee_no?: string | undefined; caller_no?: string | null | undefined }): void {
    for (const [field, value] of [
      ["callee_no", channel.callee_no],
      ["caller_no", channel.caller_no],
    ] as const) {
      if (value && !this.isOwn(value)) this.#labels.set(`n:${digitsOf(value) || value}`, `<${field}>`);
    }
  }

  /** Whether the number is one the agent file holds. */
  isOwn(value: string): boolean {
    return this.#own.has(digitsOf(value));
  }

  /** How many distinct values have a placeholder so far. */
  get replaced(): number {
    return this.#labels.size;
  }

  #label(kind: PiiKind, key: string): string {
    const known = this.#labels.get(key);
    if (known) return known;
    const n = (this.#counts.get(kind) ?? 0) + 1;
    this.#counts.set(kind, n);
    const label = `<${kind} ${n}>`;
    this.#labels.set(key, label);
    return label;
  }

  text(text: string): string {
    if (this.#keep) return text;
    let out = "";
    let at = 0;
    for (const found of personalData(text).sort((a, b) => a.offset - b.offset)) {
      out += text.slice(at, found.offset) + this.#replace(found.kind, found.text);
      at = found.offset + found.text.length;
    }
    out += text.slice(at);
    return out.replace(ACCOUNT, (match) => (ISO_DATE.test(match) ? match : this.#replace("account", match)));
  }

  /** The value's placeholder; a number the agent file holds stays (or keeps the channel's label). */
  #replace(kind: PiiKind, value: string): string {
    if (kind === "email") return this.#label(kind, `e:${value.toLowerCase()}`);
    const digits = kind === "account" ? value.replace(/ /g, "") : digitsOf(value);
    const key = `n:${digits}`;
    if (this.#own.has(digitsOf(value))) return this.#labels.get(key) ?? value;
    return this.#label(kind, key);
  }
}
