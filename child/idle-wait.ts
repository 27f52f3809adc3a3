import type { Clock } from '../src/clock.js';

/**
 * Where a child with nothing to claim waits: a poll interval, cut short by a
 * wake-up (an enqueue's notification, the supervisor's wake, a retry of ours
 * falling due) or by a stop.
 */
export class IdleWait {
  private controller = new AbortController();
  private wakeTimer: NodeJS.Timeout | undefined;
  private nextWakeAt = 0;
  private closed = false;

  constructor(
    private readonly pollMs: number,
    /** The store's time, which a run_at is on. */
    private readonly clock: Clock,
  ) {}

  /**
   * Sleep a poll interval, unless a wake came since the last wait. The
   * interval is pollMs on average, drawn from [0.5, 1.5) × pollMs: idle
   * children that all found the queue empty at the same moment would
   * otherwise poll in step forever.
   */
  async wait(): Promise<void> {
    const ms = this.pollMs * (0.5 + Math.random());
    const { signal } = this.controller;
    if (!signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
    if (!this.closed) this.controller = new AbortController();
  }

  /** Called on a wake-up (a commit the WAL watch saw, a NOTIFY): abort only once (each abort builds an AbortError). */
  wake(): void {
    if (!this.controller.signal.aborted) this.controller.abort();
  }

  /** A job of ours comes back at `runAt`: be awake for it rather than up to a poll interval late. */
  wakeAt(runAt: number): void {
    if (this.wakeTimer !== undefined && this.nextWakeAt <= runAt) return;
    clearTimeout(this.wakeTimer);
    this.nextWakeAt = runAt;
    this.wakeTimer = setTimeout(
      () => {
        this.wakeTimer = undefined;
        this.wake();
      },
      Math.max(0, runAt - this.clock.now()),
    );
    this.wakeTimer.unref();
  }

  /** No more waiting: every wait from now on returns at once. */
  close(): void {
    this.closed = true;
    clearTimeout(this.wakeTimer);
    this.wake();
  }
}
