import { monotonicMs } from '../src/clock.js';
import type { FlightRecorder } from '../src/ipc/flight-record.js';
import type { ChildToSupervisor } from '../src/ipc/protocol.js';
import type { WriteTurns } from '../src/store/write-turns.js';

/**
 * A child's write turns (src/store/write-turns.ts). While the supervisor's
 * line is closed, a write goes at once, with no message: it only notes in
 * the flight recorder when it began, so that the supervisor can tell a
 * child stopped holding the lock. A write that finds the lock taken, and
 * every write while the line is open, asks the supervisor for its turn and
 * waits with the event loop free. Without a supervisor there is no line.
 */
export class TurnsFromSupervisor implements WriteTurns {
  readonly busyTimeoutMs = 0;
  private lineOpen = false;
  /** The try under way had its turn from the supervisor: it goes back when the try is over. */
  private holdsTurn = false;
  private readonly waiting: (() => void)[] = [];
  private recorder: Pick<FlightRecorder, 'writing'> | undefined;

  constructor(
    private readonly send: (message: ChildToSupervisor) => void,
    /** Whether the supervisor is there: its IPC channel is open. */
    private readonly connected: () => boolean = () => process.connected,
  ) {
    process.once('disconnect', () => {
      for (const granted of this.waiting.splice(0)) granted();
    });
  }

  /** Where a write without a turn is noted, once the child has its flight recorder. */
  noteWritesIn(recorder: Pick<FlightRecorder, 'writing'>): void {
    this.recorder = recorder;
  }

  take(afterBusy: boolean): Promise<void> | undefined {
    if (!this.connected() || (!this.lineOpen && !afterBusy)) {
      this.recorder?.writing(monotonicMs());
      return undefined;
    }
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.send({ type: 'turn-take' });
    });
  }

  give(): boolean {
    if (!this.holdsTurn) {
      this.recorder?.writing(0);
      // Found taken without a turn: the next try waits in line, unless there is no line.
      return !this.connected();
    }
    this.holdsTurn = false;
    this.send({ type: 'turn-give' });
    return true;
  }

  /** The supervisor says the turn is ours. */
  granted(): void {
    this.holdsTurn = true;
    this.waiting.shift()?.();
  }

  /** The supervisor opened its line (writers met) or closed it (nobody waited for a while). */
  lineChanged(open: boolean): void {
    this.lineOpen = open;
  }
}
