import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { readStat } from '../proc.js';

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

/** The file of one process's records in the effects folder: named by pid and start, as a later process with the pid is another. */
export function effectsFileName(pid: number, startTicks: number): string {
  return `${pid}-${startTicks}.jsonl`;
}

/**
 * A process's side of the effects log: its records, JSON lines appended to
 * a file of its own in the folder the chaos program made. No other process
 * writes there, so a SIGKILL that cuts a write(2) short can leave a torn
 * line only at the end of the file of the process it killed (the reader
 * holds it to that), and no lock is shared that a SIGSTOPped child could
 * hold against the others.
 */
export class EffectsRecorder {
  private readonly fd: number;

  constructor(dir: string) {
    const startTicks = readStat(process.pid)?.startTicks;
    if (startTicks === undefined) throw new Error(`chaos: /proc/${process.pid}/stat cannot be read`);
    this.fd = openSync(join(dir, effectsFileName(process.pid, startTicks)), 'a');
  }

  record(
    effect: Omit<Effect, 'ts' | 'outcome' | 'proc_start'> & Partial<Pick<Effect, 'outcome' | 'proc_start'>>,
  ): void {
    const line = Buffer.from(`${JSON.stringify({ outcome: null, proc_start: null, ...effect, ts: Date.now() })}\n`);
    // write(2) may take less than asked; the rest follows, or the line would end in the middle of a record.
    for (let written = 0; written < line.length;) written += writeSync(this.fd, line, written);
  }
}
