/** A deadline `Deadlines.after` set: `run` is called once it is due, unless it was cancelled first. */
export interface Deadline {
  readonly at: number;
  readonly run: () => void;
}

/**
 * The deadlines of the jobs a child runs (each job's max runtime, and when
 * a slow job's start is written on its own), on one timer armed for the
 * earliest. A no-op job armed and cleared two timers of its own, a cost as
 * large as its own bookkeeping (docs/performance.md); here it adds an entry to
 * a set and takes it out. A cancelled deadline leaves the timer as it is: when it fires, it
 * runs what is due and is armed again for the earliest left, so jobs that
 * end back to back wake it about once per START_WRITE_DELAY_MS, not twice
 * per job. The timer keeps the process alive while a deadline is set, as
 * the jobs' own timers did.
 */
export class Deadlines {
  private readonly pending = new Set<Deadline>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;

  /** Call `run` `delayMs` from now, unless `cancel`led first. */
  after(delayMs: number, run: () => void): Deadline {
    const deadline = { at: performance.now() + delayMs, run };
    this.pending.add(deadline);
    if (deadline.at < this.armedFor) this.arm(deadline.at);
    return deadline;
  }

  cancel(deadline: Deadline | undefined): void {
    if (deadline !== undefined) this.pending.delete(deadline);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.armedFor = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedFor = Infinity;
    const now = performance.now();
    for (const deadline of this.pending)
      if (deadline.at <= now) {
        this.pending.delete(deadline);
        deadline.run();
      }
    let earliest = Infinity;
    for (const deadline of this.pending) earliest = Math.min(earliest, deadline.at);
    if (earliest < this.armedFor) this.arm(earliest);
  }
}
