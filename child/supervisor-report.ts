/**
 * What a child's loop tells its supervisor about the jobs it ran: starts,
 * counted and told at most once every STARTS_REPORT_MS (for the metrics);
 * successes, as tallies (SuccessReport); every other end, one by one, as
 * soon as it is written; and jobs let go of when their lease was lost.
 */
import type { ChildToSupervisor, FinishedJob, JobOutcome } from '../src/ipc/protocol.js';
import { traceLogFields } from '../src/tracing/traceparent.js';
import type { SettleResult } from '../src/store/types.js';
import type { PendingOutcome } from './group-commit.js';
import { SuccessReport } from './success-report.js';

/** Starts are counted for the supervisor's metrics and reported at most this often (not one message per start). */
export const STARTS_REPORT_MS = 1_000;

export class SupervisorReport {
  private readonly successes: SuccessReport;
  private startsUnreported = 0;
  private startsTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly send: (message: ChildToSupervisor) => void,
    /** Whether each success goes to the supervisor in full (ChildStart's successLines). */
    successLines: boolean,
  ) {
    this.successes = new SuccessReport((tally) => send({ type: 'jobs-succeeded', tally }), successLines);
  }

  /** Whether each success goes to the supervisor in full from now on. */
  successLines(on: boolean): void {
    this.successes.setLines(on);
  }

  started(): void {
    this.startsUnreported += 1;
    this.startsTimer ??= setTimeout(() => this.reportStarts(), STARTS_REPORT_MS);
  }

  /** A job whose lease was lost: nothing more is written about it, by this child. */
  leaseLost(jobId: number, attempt: number, durationMs: number): void {
    this.send({ type: 'jobs-finished', jobs: [{ jobId, attempt, outcome: 'LEASE_LOST', durationMs }] });
  }

  /** Outcomes written of jobs the supervisor saw start: successes into the tally, the others told at once. */
  written(outcomes: { outcome: PendingOutcome; result: SettleResult }[]): void {
    const finished: FinishedJob[] = [];
    for (const { outcome, result } of outcomes) {
      const report = finishedJob(outcome, result);
      if (report.outcome === 'SUCCEEDED') this.successes.add(report);
      else finished.push(report);
    }
    if (finished.length > 0) this.send({ type: 'jobs-finished', jobs: finished });
  }

  /** Tell now what is counted and not yet told (starts, successes): before an exit, clean or not. */
  now(): void {
    this.reportStarts();
    this.successes.flush();
  }

  private reportStarts(): void {
    clearTimeout(this.startsTimer);
    this.startsTimer = undefined;
    if (this.startsUnreported === 0) return;
    this.send({ type: 'jobs-started', count: this.startsUnreported });
    this.startsUnreported = 0;
  }
}

/** How a written outcome reads to the supervisor: lost when the write found the lease gone, released, or the status written. */
function finishedJob({ job, run, durationMs }: PendingOutcome, result: SettleResult): FinishedJob {
  const outcome: JobOutcome = !result.held ? 'LEASE_LOST' : run.verdict.type === 'release' ? 'RELEASED' : result.status;
  const retry = result.held ? result.retry : undefined;
  return {
    jobId: job.id,
    attempt: job.attempt,
    outcome,
    durationMs,
    ...(run.error ? { error: run.error } : {}),
    ...(retry ? { retry } : {}),
    ...traceLogFields(job.traceparent),
    ...run.cost,
  };
}
