// A plain-text table written page by page: the column widths are fixed by the header and the first
// page (later cells may run wider), so a long listing is never held in memory to align it. A cell
// is one line of plain text: the service's control characters are shown escaped (src/render).
import { jsonLine, terminalText } from "../escape/index.ts";

const MAX_CELL = 48;

function cell(value: unknown): string {
  if (value === undefined || value === null) return "-";
  const text = typeof value === "string" ? value : jsonLine(value);
  const flat = terminalText(text);
  return flat.length > MAX_CELL ? `${flat.slice(0, MAX_CELL - 1)}…` : flat;
}

export class TableWriter {
  #widths: number[] | undefined;
  readonly #columns: string[];
  readonly #out: (text: string) => void;

  constructor(columns: string[], out: (text: string) => void) {
    this.#columns = columns;
    this.#out = out;
  }

  write(rows: Record<string, unknown>[]): void {
    const cells = rows.map((row) => this.#columns.map((column) => cell(row[column])));
    if (!this.#widths) {
      this.#widths = this.#columns.map((c, i) => Math.max(c.length, ...cells.map((r) => (r[i] ?? "").length)));
      this.#line(this.#columns.map((c) => c.toUpperCase()));
    }
    for (const row of cells) this.#line(row);
  }

  /** Writes the header when no row came. */
  end(): void {
    if (!this.#widths) this.write([]);
  }

  #line(values: string[]): void {
    const text = values
      .map((v, i) => v.padEnd(this.#widths?.[i] ?? 0))
      .join("  ")
      .trimEnd();
    this.#out(`${text}\n`);
  }
}
