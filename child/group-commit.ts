import { coerceError } from '../src/errors.js';
import { claimRecord } from '../src/store/facts.js';
import { dbFaultOf } from '../src/store/faults.js';
import type { LogLevel } from '../src/limits.js';
import type { ClaimedJob, ClaimRequest, SettleResult, WorkerStore } from '../src/store/types.js';
import type { RunVerdict } from './job-run.js';

/** An outcome waits at most this long to be written, with whatever else is due (group commit). */
export const FLUSH_AFTER_MS = 25;

/** A verdict about a job the child holds, waiting to be written. */
export interface PendingOutcome {
  job: ClaimedJob;
  run: RunVerdict;
  durationMs: number;
  /** A job handed back before its handler began (the supervisor never heard of its start). */
  unstarted?: boolean;
}

/** The one store call the group commit makes: settle a batch, and claim in the same transaction. */
export type SettleStore = Pick<WorkerStore, 'jobsSettle'>;

export interface GroupCommitDeps {
  store: SettleStore;
  log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** How long to wait before writing again after the database refused a write. */
  retryMs: number;
  /** What was just written, each outcome with the database's answer. */
  onWritten: (written: { outcome: PendingOutcome; result: SettleResult }[]) => void;
}

/**
 * The child's group commit. Outcomes queue here and are written together in
 * one transaction, at most FLUSH_AFTER_MS after the oldest was queued,
 * whatever the handlers are doing; a claim (flushAndClaim) takes the queued
 * outcomes with it. Writes go one at a time (two at once could write one
 * outcome twice). An outcome queued while a write is in flight waits for the
 * next one; a write the database refused is kept and tried again. Nothing is
 * dropped but what `forget` drops: outcomes about jobs the child no longer
 * holds.
 */
export class GroupCommit {
  private queue: { outcome: PendingOutcome; queuedAt: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: GroupCommitDeps) {}

  add(outcome: PendingOutcome): void {
    this.queue.push({ outcome, queuedAt: Date.now() });
    this.armForOldest();
  }

  /** The lease is gone: write nothing more about this job. */
  forget(jobId: number): void {
    this.queue = this.queue.filter((entry) => entry.outcome.job.id !== jobId);
  }

  /** Write what is queued now. */
  async flush(): Promise<void> {
    await this.inTurn(() => this.write());
  }

  /**
   * Claim the next jobs, writing what is queued now in the same transaction;
   * resolves to the jobs claimed ([] if the write failed). `onTurn` hears
   * when the writes ahead of it are done and the claim's own begins.
   */
  flushAndClaim(claim: ClaimRequest, onTurn?: () => void): Promise<ClaimedJob[]> {
    return this.inTurn(() => {
      onTurn?.();
      return this.write(claim);
    });
  }

  /**
   * Another write about held jobs (the heartbeat), in turn with the outcomes:
   * run alone, it reads what is held when its turn comes, so it never renews
   * a lease whose outcome is committing beside it (and is then turned away
   * as a zombie's write).
   */
  inTurn<T>(work: () => Promise<T>): Promise<T> {
    const write = this.writes.then(work);
    this.writes = write.catch(() => undefined);
    return write;
  }

  /** Write what is in flight and until nothing is queued, or until a write fails (the caller is leaving; the supervisor takes back the rest). */
  async drain(): Promise<void> {
    // A write in flight has taken its batch out of the queue: the queue looks empty until it commits.
    await this.writes;
    while (this.queue.length > 0) {
      const before = this.queue.length;
      await this.flush();
      if (this.queue.length >= before) return;
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Write within FLUSH_AFTER_MS of the oldest queued outcome. */
  private armForOldest(): void {
    if (this.queue.length > 0) this.writeIn(this.queue[0]!.queuedAt + FLUSH_AFTER_MS - Date.now());
  }

  /** One write timer at a time: the earliest asked for stands. */
  private writeIn(delayMs: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.flush();
      },
      Math.max(0, delayMs),
    );
  }

  private async write(claim?: ClaimRequest): Promise<ClaimedJob[]> {
    const batch = this.queue;
    if (batch.length === 0 && claim === undefined) return [];
    this.queue = [];
    clearTimeout(this.timer);
    this.timer = undefined;
    const settlements = batch.map(({ outcome: { job, run } }) => ({
      id: job.id,
      leaseToken: job.leaseToken,
      startedAt: run.startedAt,
      verdict: run.verdict,
      cost: run.cost,
      claim: claimRecord(job),
      logs: run.logs,
    }));
    try {
      const written = await this.deps.store.jobsSettle({ settlements, claim });
      this.deps.onWritten(batch.map(({ outcome }, index) => ({ outcome, result: written.settled[index]! })));
      this.armForOldest();
      return written.claimed;
    } catch (error) {
      this.queue = [...batch, ...this.queue];
      // A database that is away is logged once, as an outage, not once per try.
      if (dbFaultOf(error) === undefined)
        this.deps.log('error', batch.length > 0 ? 'writing job outcomes failed; will try again' : 'claim failed', {
          err: coerceError(error),
        });
      if (this.queue.length > 0) this.writeIn(this.deps.retryMs);
      return [];
    }
  }
}
