/**
 * A task on a fixed interval, for the supervisor's maintenance schedules
 * (sweeper, retention). A tick that comes while the last run is still going
 * is skipped rather than queued, so a slow database never piles runs up.
 */
export class Every {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<unknown> | undefined;
  private stopped = false;

  /** `onError` hears a run's failure: the schedule itself goes on. */
  constructor(
    private readonly intervalMs: number,
    private readonly task: () => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Run every interval until stop(); no-op when already started or stopped. */
  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setInterval(() => {
      this.inFlight ??= this.task()
        .catch(this.onError)
        .finally(() => (this.inFlight = undefined));
    }, this.intervalMs);
  }

  /** No more ticks; resolves once the run in flight, if any, has ended. Safe twice, or before start. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }
}
