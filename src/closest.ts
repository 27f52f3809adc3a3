/**
 * "Did you mean …?": the known name closest to a misspelt one, by edit
 * distance (optimal string alignment: an insertion, a deletion, a change or
 * a swap of two neighbours each count 1), if it is close enough to be the
 * one meant.
 */

/** The edits that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  // rows[i][j]: the distance between the first i characters of a and the first j of b.
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i]!;
      const above = rows[i - 1]!;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(above[j]! + 1, row[j - 1]! + 1, above[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The candidate nearest to `word` (case aside), when it is within a third
 * of the longer name's length (at least 1 edit): `procesess` finds
 * `processes`, `emial` finds `email`, `sms` finds nothing in `email`.
 * Ties go to the candidate listed first.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    if (name === word) continue;
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    const allowed = Math.max(1, Math.floor(Math.max(word.length, name.length) / 3));
    if (distance <= allowed && (best === undefined || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}
