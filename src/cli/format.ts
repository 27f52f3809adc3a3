/** Human output of the `leasehold` commands: aligned tables (the values in them: ../reports/format.ts). */

export {
  clip,
  formatAgo,
  formatBytes,
  formatCpu,
  formatDuration,
  formatPercent,
  formatTime,
  formatWhen,
} from '../reports/format.js';

export type Cell = string | number | null | undefined;

/**
 * Columns aligned with two spaces between them; numbers right-aligned. An
 * empty table prints its header and "(none)".
 */
export function table(headers: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const text = rows.map((row) => headers.map((_, i) => cellText(row[i])));
  const numeric = headers.map(
    (_, i) =>
      rows.length > 0 && rows.every((row) => typeof row[i] === 'number' || row[i] === null || row[i] === undefined),
  );
  const widths = headers.map((header, i) => Math.max(header.length, ...text.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [line(headers.map((h) => h.toUpperCase())), ...text.map(line)];
  if (rows.length === 0) out.push('(none)');
  return out.join('\n');
}

function cellText(cell: Cell): string {
  if (cell === null || cell === undefined) return '-';
  return String(cell);
}

/** `key: value` lines with the keys padded to one width. */
export function fields(pairs: readonly (readonly [string, Cell])[]): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  // A value of several lines (a refused payload's issues) goes on under its first, aligned with it.
  const continued = `\n${' '.repeat(width + 3)}`;
  return pairs
    .map(([key, value]) => `${`${key}:`.padEnd(width + 1)}  ${cellText(value).replaceAll('\n', continued)}`)
    .join('\n');
}
