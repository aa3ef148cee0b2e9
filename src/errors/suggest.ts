// "Did you mean …?": the nearest known word to a mistyped one, for messages about unknown keys,
// flags and commands.

/** The closest known word: same letters ignoring case and separators, or within a small edit distance. */
export function didYouMean(word: string, candidates: readonly string[]): string | undefined {
  const normalize = (s: string) => s.toLowerCase().replace(/[-_\s]/g, "");
  const exact = candidates.find((c) => normalize(c) === normalize(word));
  if (exact) return exact;
  const limit = word.length <= 3 ? 1 : word.length <= 8 ? 2 : 3;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase(), limit);
    if (distance <= limit && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance (a swap of neighbours counts once); stops early past `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  if (a.length > 200 || b.length > 200) return limit + 1;
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const prev = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (rows[i - 2]?.[j - 2] as number) + 1);
      }
      row[j] = value;
    }
  }
  return rows[a.length]?.[b.length] ?? limit + 1;
}
