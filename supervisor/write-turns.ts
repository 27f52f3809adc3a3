import { BUSY_TIMEOUT_MS } from '../src/store/sqlite/connection.js';
import type { WriteTurns } from '../src/store/write-turns.js';

/** A child in the queue: told when its turn comes. */
export interface TurnTaker {
  turnGranted(): void;
}

/** The supervisor's own writes, in the same line as its children's. */
const SUPERVISOR: TurnTaker = { turnGranted: () => undefined };

/**
 * The queue's write turns on SQLite (src/store/write-turns.ts), kept by the
 * supervisor: its children ask over IPC, its own store asks here, and each
 * is served in the order it asked. Since it hands out every turn, it knows
 * who holds one and since when (the health watch kills a child that holds
 * one too long).
 */
export class WriteTurnQueue implements WriteTurns {
  /** The supervisor's own transactions keep SQLite's busy timeout against processes outside the queue. */
  readonly busyTimeoutMs = BUSY_TIMEOUT_MS;
  private holder: TurnTaker | undefined;
  private readonly waiting: TurnTaker[] = [];
  /** The supervisor's own waits, in the order they asked. */
  private readonly ownWaits: (() => void)[] = [];

  /** `taker` asks for a turn; it is told when the turn is its own. */
  request(taker: TurnTaker): void {
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
    for (let i = this.waiting.indexOf(taker); i !== -1; i = this.waiting.indexOf(taker)) this.waiting.splice(i, 1);
    this.release(taker);
  }

  take(): Promise<void> {
    return new Promise((resolve) => {
      this.ownWaits.push(resolve);
      this.request(SUPERVISOR);
    });
  }

  give(): void {
    this.release(SUPERVISOR);
  }

  private grantNext(): void {
    if (this.holder !== undefined) return;
    const next = this.waiting.shift();
    if (next === undefined) return;
    this.holder = next;
    if (next === SUPERVISOR) this.ownWaits.shift()?.();
    else next.turnGranted();
  }
}
