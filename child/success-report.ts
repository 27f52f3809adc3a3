import { countInto, DURATION_BUCKETS, emptyBuckets, PEAK_RSS_BUCKETS } from '../src/ipc/buckets.js';
import type { FinishedJob, SuccessTally } from '../src/ipc/protocol.js';

/** Successes are told to the supervisor at most this often, as one tally (not one message per job). */
export const SUCCESS_REPORT_MS = 1_000;

function emptyTally(): SuccessTally {
  return {
    count: 0,
    durationSeconds: emptyBuckets(DURATION_BUCKETS),
    cpuMs: 0,
    peakRssBytes: emptyBuckets(PEAK_RSS_BUCKETS),
    retriedJobIds: [],
  };
}

/**
 * Counts a child's successes into a SuccessTally and sends it: at most once
 * every SUCCESS_REPORT_MS, at the next turn of the event loop when nothing
 * was sent for that long (so a lone success, a child's first above all, is
 * heard at once), and on `flush` (a drain, a stop, the child's exit). A
 * success after a first attempt goes at the next turn as well: it clears
 * its job's crash count at the supervisor, which must not wait on a child
 * that may die meanwhile (they are as rare as failures, which go one by one).
 */
export class SuccessReport {
  private tally: SuccessTally | undefined;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private sentAt = -Infinity;

  constructor(
    private readonly send: (tally: SuccessTally) => void,
    /** Whether each success also goes in full (the supervisor logs it at debug). */
    private lines: boolean,
  ) {}

  setLines(on: boolean): void {
    this.lines = on;
  }

  add(job: FinishedJob): void {
    const tally = (this.tally ??= emptyTally());
    tally.count += 1;
    countInto(tally.durationSeconds, DURATION_BUCKETS, job.durationMs / 1000);
    if (job.cpuMs !== undefined && job.peakRssBytes !== undefined) {
      tally.cpuMs += job.cpuMs;
      countInto(tally.peakRssBytes, PEAK_RSS_BUCKETS, job.peakRssBytes);
    }
    if (job.attempt > 1) tally.retriedJobIds.push(job.jobId);
    if (this.lines) (tally.jobs ??= []).push(job);
    this.schedule(job.attempt > 1 ? Date.now() : this.sentAt + SUCCESS_REPORT_MS);
  }

  /** Send what is counted now. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.tally === undefined) return;
    this.send(this.tally);
    this.tally = undefined;
    this.sentAt = Date.now();
  }

  /** Send by `at` (or at the next turn of the event loop, if that is past): an earlier time replaces a later one. */
  private schedule(at: number): void {
    if (at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.flush(), Math.max(0, at - Date.now()));
  }
}
