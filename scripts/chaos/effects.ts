import { openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';

/**
 * What a chaos handler did, in its own words:
 * - `start`: it began an attempt (`pid` is the child's, `proc_start` its start in /proc);
 * - `spawn`: it started a subprocess (`pid`, `proc_start` are the subprocess's);
 * - `write`: it made a fenced write (ctx.progress); `outcome` says what came back;
 * - `done`: it finished its work and is about to return its result.
 */
export type EffectKind = 'start' | 'spawn' | 'write' | 'done';

/**
 * A write's outcome as the handler saw it: taken; `refused`, the store
 * turned it away with LeaseLostError (the fence); `lost_locally`, the child
 * refused it before asking the store (it knew the lease was gone); `failed`,
 * another error (the database away).
 */
export type WriteOutcome = 'accepted' | 'refused' | 'lost_locally' | `failed:${string}`;

export interface Effect {
  job_id: number;
  attempt: number;
  lease_token: string;
  pid: number;
  /** The process's start in clock ticks since boot (/proc/<pid>/stat), null when it was gone before it could be read. */
  proc_start: number | null;
  kind: EffectKind;
  outcome: WriteOutcome | null;
  /** For a write, when the handler sent it: its outcome is recorded (`ts`) when the answer came, maybe much later. */
  sent_at?: number;
  ts: number;
}

/**
 * The effects log is a file of JSON lines, each appended by one write(2)
 * with O_APPEND: appends do not interleave, a SIGKILLed handler's lines
 * survive, and no lock is held between two records, so that a SIGSTOPped
 * child cannot stall the others.
 */
export class EffectsLog {
  constructor(readonly path: string) {
    writeFileSync(path, '');
  }

  /**
   * Every record, oldest first. A line that does not parse is an error, not
   * a record to skip: a lost record could hide a zombie's write. (A write(2)
   * of a line this short to a local file is not cut short by a SIGKILL.)
   */
  all(): Effect[] {
    const lines = readFileSync(this.path, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    const effects = lines.map((line, index) => {
      try {
        return JSON.parse(line) as Effect;
      } catch {
        throw new Error(`${this.path}: line ${index + 1} is not a whole record: ${line.slice(0, 200)}`);
      }
    });
    return effects.sort((a, b) => a.ts - b.ts);
  }
}

/** A handler's side: appends its records to the log the chaos program created. */
export class EffectsRecorder {
  private readonly fd: number;

  constructor(path: string) {
    this.fd = openSync(path, 'a');
  }

  record(
    effect: Omit<Effect, 'ts' | 'outcome' | 'proc_start'> & Partial<Pick<Effect, 'outcome' | 'proc_start'>>,
  ): void {
    writeSync(this.fd, `${JSON.stringify({ outcome: null, proc_start: null, ...effect, ts: Date.now() })}\n`);
  }
}
