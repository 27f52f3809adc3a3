import type { ChildToSupervisor } from '../src/ipc/protocol.js';
import type { WriteTurns } from '../src/store/write-turns.js';

/**
 * A child's write turns (src/store/write-turns.ts), asked of its supervisor
 * over IPC. A child waits in no busy handler at all: a lock held outside the
 * queue sends its turn back, to be tried again after a wait with the event
 * loop free. Without a supervisor there is no queue: writes go at once.
 */
export class TurnsFromSupervisor implements WriteTurns {
  readonly busyTimeoutMs = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly send: (message: ChildToSupervisor) => void) {
    process.once('disconnect', () => {
      for (const granted of this.waiting.splice(0)) granted();
    });
  }

  take(): Promise<void> {
    if (!process.connected) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.send({ type: 'turn-take' });
    });
  }

  give(): void {
    this.send({ type: 'turn-give' });
  }

  /** The supervisor says the turn is ours. */
  granted(): void {
    this.waiting.shift()?.();
  }
}
