/**
 * What a child said last, for the attempt its death is charged to: the
 * error nobody caught (told over IPC before it exited), its last resident
 * set, and the tail of its stderr. `WORKER:CRASHED` says that it died; this
 * says why.
 */
import { capBytes, type ErrorSummary } from '../src/errors.js';
import { formatBytes } from '../src/reports/format.js';

/** How much of a child's stderr is kept for its last words. */
const TAIL = { lines: 20, chars: 4096 } as const;

/** The error that ended a child, as it reported it. */
export interface UncaughtError {
  origin: 'uncaughtException' | 'unhandledRejection';
  error: ErrorSummary;
  stack: string | null;
}

/** The last lines a child wrote to stderr, within TAIL. */
export class StderrTail {
  private readonly lines: string[] = [];

  add(line: string): void {
    this.lines.push(line.length <= TAIL.chars ? line : `${line.slice(0, TAIL.chars - 1)}…`);
    if (this.lines.length > TAIL.lines) this.lines.shift();
  }

  /** The kept lines, the newest last, the oldest dropped past TAIL.chars in all. */
  read(): string[] {
    const kept: string[] = [];
    let chars = 0;
    for (let i = this.lines.length - 1; i >= 0 && chars + this.lines[i]!.length <= TAIL.chars; i--) {
      kept.unshift(this.lines[i]!);
      chars += this.lines[i]!.length;
    }
    return kept;
  }
}

export interface LastWords {
  uncaught: UncaughtError | undefined;
  /** Its resident set at the health watch's last sample, and when that was taken. */
  lastRss: { bytes: number; at: number } | undefined;
  stderr: string[];
}

/** The full story of a child's end, for job_attempts.error_stack (capped like any stack). */
export function lastWordsText(pid: number, end: string, words: LastWords, now = Date.now()): string {
  const parts = [`child ${pid} ${end}`];
  if (words.uncaught !== undefined)
    parts.push(
      `${words.uncaught.origin}: ${words.uncaught.stack ?? `${words.uncaught.error.name}: ${words.uncaught.error.message}`}`,
    );
  if (words.lastRss !== undefined) {
    parts.push(
      `last resident set: ${formatBytes(words.lastRss.bytes)} (sampled ${((now - words.lastRss.at) / 1000).toFixed(1)} s before the end)`,
    );
  }
  parts.push(
    words.stderr.length === 0
      ? 'stderr: nothing written'
      : `stderr, last ${words.stderr.length} lines:\n${words.stderr.join('\n')}`,
  );
  return capBytes(parts.join('\n\n'));
}
