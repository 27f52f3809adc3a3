/** Readable values for operators (the CLI and the dashboard): durations, times, ages, sizes, clipped text. */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** 450ms, 12s, 3m12s, 2h05m, 3d04h: two units at most, the second zero-padded. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(Math.round(ms));
  if (abs < SECOND) return `${sign}${abs}ms`;
  if (abs < MINUTE) return `${sign}${Math.floor(abs / SECOND)}s`;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (abs < HOUR) return `${sign}${Math.floor(abs / MINUTE)}m${pad(Math.floor((abs % MINUTE) / SECOND))}s`;
  if (abs < DAY) return `${sign}${Math.floor(abs / HOUR)}h${pad(Math.floor((abs % HOUR) / MINUTE))}m`;
  return `${sign}${Math.floor(abs / DAY)}d${pad(Math.floor((abs % DAY) / HOUR))}h`;
}

/** CPU time: 0.120ms, 45.3ms, 1.52s, 12.4s, then as a duration (2m05s); "-" for none. */
export function formatCpu(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms < SECOND) return `${Number(ms.toPrecision(3))}ms`;
  if (ms < MINUTE) return `${(ms / SECOND).toFixed(ms < 10 * SECOND ? 2 : 1)}s`;
  return formatDuration(ms);
}

/** "3m12s ago", "in 12s", or "-" for no time. */
export function formatAgo(at: number | null | undefined, now: number): string {
  if (at === null || at === undefined) return '-';
  const delta = now - at;
  return delta >= 0 ? `${formatDuration(delta)} ago` : `in ${formatDuration(-delta)}`;
}

/** 2026-01-01 12:00:03Z (UTC, to the second), or "-". */
export function formatTime(at: number | null | undefined): string {
  if (at === null || at === undefined) return '-';
  return `${new Date(at).toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** "2026-01-01 12:00:03Z (3m12s ago)", or "-". */
export function formatWhen(at: number | null | undefined, now: number): string {
  if (at === null || at === undefined) return '-';
  return `${formatTime(at)} (${formatAgo(at, now)})`;
}

/** 512 B, 12.3 KiB, 4.0 MiB, 1.20 GiB. */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '-';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}

export function formatPercent(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : `${value.toFixed(1)}%`;
}

/** Text cut to one line of at most `max` characters. */
export function clip(text: string | null | undefined, max = 60): string {
  if (text === null || text === undefined || text === '') return '-';
  const line = text.replace(/\s+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/**
 * Class names in code-unit order, as the database's own ORDER BY class gives
 * them: the same on every machine, where localeCompare follows the locale and
 * builds an ICU collator on first use, a start-up cost a short command notices.
 */
export function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
