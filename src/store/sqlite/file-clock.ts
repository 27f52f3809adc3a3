import { readFileSync } from 'node:fs';
import { AnchoredClock, monotonicMs, stepTowardsWall, type Anchor, type Clock } from '../../clock.js';
import type { SqliteDb } from './connection.js';
import { prepareClockStatements, type ClockStatements } from './sql/clock.js';

/** How often a process reads the file's anchor again, to follow the supervisor's steps. */
const REREAD_MS = 10_000;
/**
 * The most one step moves the timeline towards the wall clock. A process
 * that has not read the step yet is at most this far off the others, for at
 * most REREAD_MS: far inside any lease's slack.
 */
export const FOLLOW_STEP_MS = 500;

/**
 * The kernel's id of this boot: monotonic readings compare only within one.
 * Without /proc (not Linux), a reading below the anchor's still tells a new boot.
 */
function currentBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

interface AnchorRow {
  boot_id: string;
  wall_ms: number;
  monotonic_ms: number;
}

const anchorOf = (row: AnchorRow): Anchor => ({ wallMs: row.wall_ms, monotonicMs: row.monotonic_ms });

/**
 * The time of a SQLite file: one timeline for every process on it, all on
 * one host. Its anchor (a wall time, and the monotonic reading it was taken
 * at) lives in the file; each process's now is the anchor's wall time plus
 * the monotonic time since. So a step of the wall clock (NTP, an operator)
 * moves no lease, no run_at and no backoff: forward, it takes back no live
 * lease; back, it leaves no lease unrenewable and no retry late. The first
 * process to open the file in a boot anchors it on the wall clock; after a
 * step, the supervisor moves the timeline towards the wall clock by at most
 * FOLLOW_STEP_MS a minute (clockFollowWall), so it never jumps.
 */
export class FileClock implements Clock {
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly statements: ClockStatements,
    private readonly bootId: string,
    private readonly clock: AnchoredClock,
  ) {
    this.timer = setInterval(() => this.reread(), REREAD_MS);
    this.timer.unref();
  }

  /** The file's timeline, anchored now if this boot has none yet (one short write transaction, once a boot). */
  static open(db: SqliteDb): FileClock {
    const statements = prepareClockStatements(db);
    const bootId = currentBootId();
    const anchorNow = db.transaction((): Anchor => {
      const row = statements.get.get() as AnchorRow | undefined;
      if (row !== undefined && !isOtherBoot(row, bootId)) return anchorOf(row);
      const anchor = { wallMs: Date.now(), monotonicMs: monotonicMs() };
      statements.set.run({ boot_id: bootId, wall_ms: anchor.wallMs, monotonic_ms: anchor.monotonicMs });
      return anchor;
    });
    const row = statements.get.get() as AnchorRow | undefined;
    const anchor = row !== undefined && !isOtherBoot(row, bootId) ? anchorOf(row) : anchorNow.immediate();
    return new FileClock(statements, bootId, new AnchoredClock(anchor));
  }

  now(): number {
    return this.clock.now();
  }

  /** Inside a write transaction: move the anchor one step towards the wall clock (no change when it is there). */
  followWall(): void {
    const row = this.statements.get.get() as AnchorRow | undefined;
    if (row === undefined || isOtherBoot(row, this.bootId)) return;
    const next = stepTowardsWall(anchorOf(row), Date.now(), monotonicMs(), FOLLOW_STEP_MS);
    if (Math.round(next.wallMs - row.wall_ms - (next.monotonicMs - row.monotonic_ms)) !== 0)
      this.statements.set.run({ boot_id: this.bootId, wall_ms: next.wallMs, monotonic_ms: next.monotonicMs });
    this.clock.reanchor(next);
  }

  close(): void {
    clearInterval(this.timer);
  }

  private reread(): void {
    try {
      const row = this.statements.get.get() as AnchorRow | undefined;
      if (row !== undefined && !isOtherBoot(row, this.bootId)) this.clock.reanchor(anchorOf(row));
    } catch {
      // The file is busy or away: the last anchor stands.
    }
  }
}

/** An anchor taken in another boot: its monotonic reading means nothing now. */
function isOtherBoot(row: AnchorRow, bootId: string): boolean {
  return row.boot_id !== bootId || row.monotonic_ms > monotonicMs();
}
