/**
 * A job's own log lines (ctx.log), as `leasehold logs <id>`, `show --logs`
 * and the dashboard's job page print them: grouped by attempt, in order.
 */
import type { AttemptRow, JobLogRow } from '../store/types.js';

/** One stored line, as read: its time with milliseconds, its level, its message and its fields. */
export interface LogLine {
  attempt: number;
  time: string;
  level: string;
  message: string;
  fields: string | null;
}

export function logLines(rows: readonly JobLogRow[]): LogLine[] {
  return rows.map((row) => ({
    attempt: row.attempt,
    time: new Date(row.ts).toISOString().slice(11, 23),
    level: row.level,
    message: row.message,
    fields: row.fields,
  }));
}

/** The lines as text, under a heading per attempt; `none` when the job logged nothing. */
export function logsText(rows: readonly JobLogRow[]): string {
  if (rows.length === 0) return '(no log lines: the handler wrote none with ctx.log)';
  const out: string[] = [];
  let attempt: number | undefined;
  for (const line of logLines(rows)) {
    if (line.attempt !== attempt) {
      attempt = line.attempt;
      out.push(`attempt ${attempt}`);
    }
    out.push(`  ${line.time} ${line.level.padEnd(5)} ${line.message}${line.fields === null ? '' : ` ${line.fields}`}`);
  }
  return out.join('\n');
}

/** The attempt whose stack an operator reads first: the last one that has one. */
export function lastStack(attempts: readonly AttemptRow[]): { attempt: number; stack: string } | undefined {
  for (let i = attempts.length - 1; i >= 0; i--) {
    const { attempt, error_stack } = attempts[i]!;
    if (error_stack !== null) return { attempt, stack: error_stack };
  }
  return undefined;
}
