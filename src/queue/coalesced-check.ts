/** How often a CoalescedCheck may run: at most one every `gapMs`, and busy at most `busyShare` of the time. */
export interface CheckPace {
  gapMs: number;
  /** After a check that took d ms, the next waits until d × (1 − busyShare) / busyShare ms have passed… */
  busyShare: number;
  /** …but never longer than this (one slow check must not hold back the answers for long). */
  maxRestMs: number;
}

/**
 * Runs a check soon after each wake, never two at once, at most one every
 * `gapMs`, and busy at most `busyShare` of the time: a burst of wakes (every
 * commit of a busy SQLite file, a notification per settle transaction)
 * costs one check, and when checks grow slow under load they grow rarer,
 * so that the readers never take more than their share from the queue's own
 * work. A wake during a check makes one more check after it, so nothing a
 * wake announced is left unread. A failed check goes to `onError`; the next
 * wake tries again.
 */
export class CoalescedCheck {
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The earliest the next check may start. */
  private nextAt = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly check: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
    private readonly pace: CheckPace,
  ) {}

  wake(): void {
    if (this.stopped) return;
    this.wanted = true;
    if (this.running !== undefined || this.timer !== undefined) return;
    this.timer = setTimeout(() => this.run(), Math.max(0, this.nextAt - Date.now()));
  }

  private run(): void {
    this.timer = undefined;
    this.wanted = false;
    const started = Date.now();
    this.running = this.check()
      .catch(this.onError)
      .finally(() => {
        const ended = Date.now();
        const rest = Math.min(
          this.pace.maxRestMs,
          ((ended - started) * (1 - this.pace.busyShare)) / this.pace.busyShare,
        );
        this.nextAt = Math.max(started + this.pace.gapMs, ended + rest);
        this.running = undefined;
        if (this.wanted) this.wake();
      });
  }

  /** No check starts after this; resolves once the one running (if any) ended. Safe twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
