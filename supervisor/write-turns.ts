import { BUSY_TIMEOUT_MS } from '../src/store/sqlite/connection.js';
import type { WriteTurns } from '../src/store/write-turns.js';

/** A child of the queue: told when the line opens or closes, and when its turn comes. */
export interface TurnTaker {
  turnGranted(): void;
  lineChanged(open: boolean): void;
}

/** The supervisor's own writes, in the same line as its children's. */
const SUPERVISOR: TurnTaker = { turnGranted: () => undefined, lineChanged: () => undefined };

/**
 * How long the line stays open after children last met (one asked while
 * another held or waited). Children that met once meet again soon: closing
 * at once would cost two messages to every child each time they did. The
 * supervisor's own writes open the line but do not keep it open: they come
 * in runs (a stats catch-up) that would keep every child asking for turns
 * throughout.
 */
export const LINE_IDLE_MS = 50;

/**
 * The queue's line of writers on SQLite (src/store/write-turns.ts), kept by
 * the supervisor. It opens when a writer (a child over IPC, or the
 * supervisor's own store) found the lock taken, and tells every child; while
 * open, each write asks and is served in the order it asked, one at a time;
 * it closes once it is empty and children have not met for LINE_IDLE_MS.
 * Since it hands out every turn in line, it knows who holds one and since
 * when (the health watch kills a child that holds one too long).
 */
export class WriteTurnQueue implements WriteTurns {
  /** The supervisor's own tries keep SQLite's busy timeout against processes outside the queue. */
  readonly busyTimeoutMs = BUSY_TIMEOUT_MS;
  private readonly members = new Set<TurnTaker>();
  private open = false;
  private closing: NodeJS.Timeout | undefined;
  /** When the line last opened, or a child asked while another held the turn or waited (performance.now()). */
  private lastMet = 0;
  private holder: TurnTaker | undefined;
  private readonly waiting: TurnTaker[] = [];
  /** The supervisor's own waits, in the order they asked. */
  private readonly ownWaits: (() => void)[] = [];

  /** A child joins the queue when it starts: it hears whether the line is open. */
  join(taker: TurnTaker): void {
    this.members.add(taker);
    if (this.open) taker.lineChanged(true);
  }

  /** `taker` asks for a turn; it is told when the turn is its own. */
  request(taker: TurnTaker): void {
    const metAChild =
      (this.holder !== undefined && this.holder !== SUPERVISOR) || this.waiting.some((other) => other !== SUPERVISOR);
    if (!this.open || (taker !== SUPERVISOR && metAChild)) this.lastMet = performance.now();
    this.openLine();
    this.waiting.push(taker);
    this.grantNext();
  }

  /** `taker` is done with its turn; a release from one that does not hold it changes nothing. */
  release(taker: TurnTaker): void {
    if (this.holder !== taker) return;
    this.holder = undefined;
    this.grantNext();
  }

  /** `taker` is gone (a child exited): its place in line goes, and its turn if it held one. */
  leave(taker: TurnTaker): void {
    this.members.delete(taker);
    for (let i = this.waiting.indexOf(taker); i !== -1; i = this.waiting.indexOf(taker)) this.waiting.splice(i, 1);
    this.release(taker);
  }

  take(afterBusy: boolean): Promise<void> | undefined {
    if (!this.open && !afterBusy) return undefined;
    return new Promise((resolve) => {
      this.ownWaits.push(resolve);
      this.request(SUPERVISOR);
    });
  }

  give(): boolean {
    if (this.holder !== SUPERVISOR) return false;
    this.release(SUPERVISOR);
    return true;
  }

  private grantNext(): void {
    if (this.holder !== undefined) return;
    const next = this.waiting.shift();
    if (next === undefined) return this.closeSoon();
    this.holder = next;
    if (next === SUPERVISOR) this.ownWaits.shift()?.();
    else next.turnGranted();
  }

  private openLine(): void {
    if (this.open) return;
    this.open = true;
    for (const member of this.members) member.lineChanged(true);
  }

  /** The line is empty: close it if writers have not met for LINE_IDLE_MS, else look again then. */
  private closeSoon(): void {
    if (!this.open || this.closing !== undefined) return;
    const quietForMs = performance.now() - this.lastMet;
    if (quietForMs >= LINE_IDLE_MS) {
      this.open = false;
      for (const member of this.members) member.lineChanged(false);
      return;
    }
    this.closing = setTimeout(() => {
      this.closing = undefined;
      if (this.holder === undefined && this.waiting.length === 0) this.closeSoon();
    }, LINE_IDLE_MS - quietForMs);
    this.closing.unref();
  }
}
