/**
 * Runs a check soon after each wake, never two at once and at most one every
 * `gapMs`: a burst of wakes (every commit of a busy SQLite file, a
 * notification per settle transaction) costs one check. A wake during a
 * check makes one more check after it, so nothing a wake announced is left
 * unread. A failed check goes to `onError`; the next wake tries again.
 */
export class CoalescedCheck {
  private wanted = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastStart = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly check: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
    private readonly gapMs: number,
  ) {}

  wake(): void {
    if (this.stopped) return;
    this.wanted = true;
    if (this.running !== undefined || this.timer !== undefined) return;
    this.timer = setTimeout(() => this.run(), Math.max(0, this.lastStart + this.gapMs - Date.now()));
  }

  private run(): void {
    this.timer = undefined;
    this.wanted = false;
    this.lastStart = Date.now();
    this.running = this.check()
      .catch(this.onError)
      .finally(() => {
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
