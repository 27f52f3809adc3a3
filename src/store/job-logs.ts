/**
 * A job's own log lines (ctx.log), per attempt: the cap a child keeps them
 * under while the handler runs, and the rows the store writes with the
 * attempt's outcome.
 */
import type { AttemptLogs, JobLogLine, JobLogRow } from './data.js';

/** What an attempt keeps: its last this many lines, within this many bytes (a runaway logger cannot bloat the database). */
export const JOB_LOG_CAP = { lines: 200, bytes: 64 * 1024 } as const;
/** One line's message and fields are cut to this many characters each, so that one line cannot take the whole cap. */
const LINE_MAX_CHARS = 8 * 1024;

const cut = (text: string) => (text.length <= LINE_MAX_CHARS ? text : `${text.slice(0, LINE_MAX_CHARS - 1)}…`);
const lineBytes = (line: JobLogLine) => line.msg.length + (line.fields?.length ?? 0) + 32;

/**
 * The lines of one attempt as they come, the oldest dropped first once the
 * cap is reached. Sizes are counted in UTF-16 units, which is close enough
 * for a cap and costs nothing.
 */
export class AttemptLogBuffer {
  private readonly lines: JobLogLine[] = [];
  private bytes = 0;
  private dropped = 0;

  add(level: string, msg: string, fields: Record<string, unknown> | undefined): void {
    const line: JobLogLine = { ts: Date.now(), level, msg: cut(msg), fields: fieldsJson(fields) };
    this.lines.push(line);
    this.bytes += lineBytes(line);
    while (this.lines.length > JOB_LOG_CAP.lines || (this.bytes > JOB_LOG_CAP.bytes && this.lines.length > 1)) {
      this.bytes -= lineBytes(this.lines.shift()!);
      this.dropped += 1;
    }
  }

  logs(): AttemptLogs {
    return { lines: this.lines, dropped: this.dropped };
  }
}

function fieldsJson(fields: Record<string, unknown> | undefined): string | null {
  if (fields === undefined || Object.keys(fields).length === 0) return null;
  try {
    return cut(JSON.stringify(fields));
  } catch {
    return JSON.stringify({ unserialisable: String(fields) });
  }
}

/** The note that stands first when the cap dropped lines, so every reader says so. */
export function droppedNote(dropped: number): string {
  return `${dropped} earlier line${dropped === 1 ? ' was' : 's were'} dropped: an attempt keeps its last ${JOB_LOG_CAP.lines} lines, within ${JOB_LOG_CAP.bytes / 1024} KiB`;
}

/** The rows an attempt's logs are stored as, in order: the drop note first, when lines were dropped. */
export function jobLogRows(jobId: number, attempt: number, logs: AttemptLogs): JobLogRow[] {
  const rows: JobLogRow[] = [];
  const row = (line: JobLogLine): JobLogRow => ({
    job_id: jobId,
    attempt,
    seq: rows.length,
    ts: line.ts,
    level: line.level,
    message: line.msg,
    fields: line.fields,
  });
  if (logs.dropped > 0)
    rows.push(row({ ts: logs.lines[0]?.ts ?? 0, level: 'warn', msg: droppedNote(logs.dropped), fields: null }));
  for (const line of logs.lines) rows.push(row(line));
  return rows;
}
