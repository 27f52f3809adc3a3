import { setTimeout as sleep } from 'node:timers/promises';
import { coerceError } from '../src/errors.js';
import type { ChildToSupervisor, FinishedJob, JobOutcome } from '../src/ipc/protocol.js';
import type { ClaimedJob, ClaimRequest, Settlement, SettleResult } from '../src/store/types.js';
import { ABORT, JobRun, type JobRunDeps, type RunVerdict } from './job-run.js';

/** Verdicts wait at most this long to be written with later ones (the batch's end or the next claim). */
export const FLUSH_AFTER_MS = 25;
/** A batch whose every job took less than this is followed by a batch twice as big (up to claim_batch). */
export const FAST_JOB_MS = 5;

export interface ClaimLoopDeps extends Omit<JobRunDeps, 'heartbeat'> {
  ownerId: string;
  send: (message: ChildToSupervisor) => void;
}

interface PendingVerdict {
  job: ClaimedJob;
  run: RunVerdict;
  durationMs: number;
}

/**
 * A child's work. Claim a batch of its class, run each job in turn, and
 * write the verdicts in one transaction together with the next claim: with
 * a busy queue that is one transaction per batch, not three per job. A
 * verdict never waits more than FLUSH_AFTER_MS for company. One heartbeat
 * renews every lease the child holds. stop() hands back what was claimed
 * but not started, without spending a retry.
 */
export class ClaimLoop {
  private running: Promise<void> | undefined;
  private stopping = false;
  /** Claimed and not yet written about: the job running and the ones waiting their turn. */
  private readonly held = new Map<number, ClaimedJob>();
  private waiting: ClaimedJob[] = [];
  private pending: PendingVerdict[] = [];
  private pendingSince = 0;
  /**
   * Jobs to claim next: 1 at first and after any slow job, doubling after a
   * batch of fast ones, up to claim_batch. Short jobs are claimed many per
   * transaction; a slow job never keeps others waiting behind it in a batch.
   */
  private batchSize = 1;
  private batchAllFast = true;
  private lastClaimed = 0;
  private current: JobRun | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  /** Cuts the current idle wait short (a wake, a due retry, a stop). */
  private idle = new AbortController();
  private wakeTimer: NodeJS.Timeout | undefined;
  private nextWakeAt = 0;
  /** Writes of verdicts go one after another: two at once would write the same verdict twice. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: ClaimLoopDeps) {}

  start(): void {
    this.heartbeatTimer ??= setInterval(() => void this.heartbeat(), this.deps.config.heartbeat_seconds * 1000);
    this.running ??= this.loop().finally(() => clearInterval(this.heartbeatTimer));
  }

  /**
   * Stop claiming and wait for the job in hand. With `abortReason`, abort it
   * first, and if it has not let go within `graceMs`, write its verdict
   * without waiting for the handler.
   */
  async stop(abortReason?: string, graceMs = 0): Promise<void> {
    this.stopping = true;
    this.idle.abort();
    const inHand = this.current;
    if (abortReason === undefined || inHand === undefined) return this.running;
    inHand.abort(ABORT.shutdown(abortReason));
    const letGo = await Promise.race([this.running?.then(() => true), sleep(graceMs).then(() => false)]);
    if (letGo) return;
    const verdict = await inHand.verdictNow();
    if (verdict !== null) this.pending.push({ job: inHand.job, run: verdict, durationMs: Date.now() - inHand.startedAt });
    this.held.delete(inHand.job.id);
    await this.flushAndHandBack();
  }

  /**
   * Killed by the supervisor (SIGTERM): it knows why and takes the running
   * job back itself with the right error code, so write nothing about that
   * job; write only the verdicts already reached, and hand back the jobs
   * that never started.
   */
  async abandon(): Promise<void> {
    this.stopping = true;
    this.idle.abort();
    const inHand = this.current;
    if (inHand !== undefined) {
      this.held.delete(inHand.job.id);
      inHand.abort(ABORT.shutdown('killed'));
    }
    await this.flushAndHandBack();
  }

  private async loop(): Promise<void> {
    try {
      this.waiting = await this.flush(this.claimRequest());
      while (!this.stopping) {
        const job = this.waiting.shift();
        if (job === undefined) {
          if (this.pending.length > 0) {
            this.waiting = await this.flush(this.claimRequest());
            continue;
          }
          await this.idleWait();
          if (!this.stopping) this.waiting = await this.flush(this.claimRequest());
          continue;
        }
        if (this.oldestPendingAge() >= FLUSH_AFTER_MS) await this.flush();
        await this.runOne(job);
      }
    } finally {
      await this.flushAndHandBack();
    }
  }

  /** Stop idling and claim now. */
  wake(): void {
    this.idle.abort();
  }

  /**
   * Sleep a poll interval, unless a wake came since the last wait (then claim
   * again at once). The interval is poll_seconds on average, drawn from
   * [0.5, 1.5) × poll_seconds: idle children that all found the queue empty
   * at the same moment would otherwise poll in step forever, and a job that
   * no wake-up announces would wait for that one shared beat.
   */
  private async idleWait(): Promise<void> {
    const ms = this.deps.config.poll_seconds * 1000 * (0.5 + Math.random());
    if (!this.idle.signal.aborted) await sleep(ms, undefined, { signal: this.idle.signal }).catch(() => undefined);
    if (!this.stopping) this.idle = new AbortController();
  }

  /** A job of ours that failed comes back at `runAt`: be awake for it rather than up to a poll interval late. */
  private wakeAt(runAt: number): void {
    if (this.wakeTimer !== undefined && this.nextWakeAt <= runAt) return;
    clearTimeout(this.wakeTimer);
    this.nextWakeAt = runAt;
    this.wakeTimer = setTimeout(() => {
      this.wakeTimer = undefined;
      this.wake();
    }, Math.max(0, runAt - Date.now()));
    this.wakeTimer.unref();
  }

  private claimRequest(): ClaimRequest | undefined {
    if (this.stopping) return undefined;
    const { config, ownerId } = this.deps;
    this.batchSize = this.batchAllFast && this.lastClaimed > 0 ? Math.min(config.claim_batch, this.batchSize * 2) : 1;
    this.batchAllFast = true;
    return { classes: [config.name], ownerId, limit: this.batchSize, leaseMs: config.lease_seconds * 1000 };
  }

  private oldestPendingAge(): number {
    return this.pending.length === 0 ? 0 : Date.now() - this.pendingSince;
  }

  private async runOne(job: ClaimedJob): Promise<void> {
    if (!this.held.has(job.id)) return; // lost or cancelled while it waited
    const run = new JobRun({ ...this.deps, heartbeat: () => this.heartbeat() }, job);
    this.current = run;
    this.deps.send({ type: 'job-started', jobId: job.id, attempt: job.attempt, leaseToken: job.leaseToken });
    try {
      const verdict = await run.run();
      if (Date.now() - run.startedAt >= FAST_JOB_MS) this.batchAllFast = false;
      if (verdict === null) {
        this.held.delete(job.id);
        const lost = { jobId: job.id, attempt: job.attempt, outcome: 'LEASE_LOST' as const, durationMs: Date.now() - run.startedAt };
        this.deps.send({ type: 'jobs-finished', jobs: [lost] });
        return;
      }
      if (this.pending.length === 0) this.pendingSince = Date.now();
      this.pending.push({ job, run: verdict, durationMs: Date.now() - run.startedAt });
    } finally {
      this.current = undefined;
    }
  }

  /**
   * Write every pending verdict and claim the next batch, in one
   * transaction. A database error here is logged and the verdicts are kept
   * for the next try (their leases are still renewed by the heartbeat).
   */
  private flush(claim?: ClaimRequest): Promise<ClaimedJob[]> {
    const write = this.writes.then(() => this.writePending(claim));
    this.writes = write.catch(() => undefined);
    return write;
  }

  private async writePending(claim?: ClaimRequest): Promise<ClaimedJob[]> {
    const pending = this.pending;
    if (pending.length === 0 && claim === undefined) return [];
    const settlements: Settlement[] = pending.map(({ job, run }) => ({ id: job.id, leaseToken: job.leaseToken, startedAt: run.startedAt, verdict: run.verdict }));
    let written: { settled: SettleResult[]; claimed: ClaimedJob[] };
    try {
      written = await this.deps.store.jobsSettle({ settlements, claim });
    } catch (error) {
      this.deps.log('error', pending.length > 0 ? 'writing job outcomes failed; will try again' : 'claim failed', { err: coerceError(error) });
      await sleep(this.deps.config.poll_seconds * 1000);
      return [];
    }
    this.pending = [];
    if (pending.length > 0) this.deps.send({ type: 'jobs-finished', jobs: written.settled.map((result, index) => this.finished(pending[index]!, result)) });
    if (claim !== undefined) this.lastClaimed = written.claimed.length;
    for (const job of written.claimed) this.held.set(job.id, job);
    return written.claimed;
  }

  /** A written verdict: the job leaves our hands, and a retry of ours gets a wake-up when due. */
  private finished(pending: PendingVerdict, result: SettleResult): FinishedJob {
    const { job, run, durationMs } = pending;
    this.held.delete(job.id);
    const outcome: JobOutcome = !result.held ? 'LEASE_LOST' : run.verdict.type === 'release' ? 'RELEASED' : result.status;
    if (result.held && result.status === 'QUEUED' && result.runAt !== null) this.wakeAt(result.runAt);
    return { jobId: job.id, attempt: job.attempt, outcome, durationMs, ...(run.error ? { error: run.error } : {}) };
  }

  /** The end of the loop: write what is pending and hand back what was claimed but never started. */
  private async flushAndHandBack(): Promise<void> {
    for (const job of this.waiting) {
      if (this.held.has(job.id)) this.pending.push({ job, run: { verdict: { type: 'release', reason: 'child stopping' }, startedAt: null }, durationMs: 0 });
    }
    this.waiting = [];
    await this.flush();
  }

  /** Renew every lease in hand; learn of cancels; abort a job whose lease is gone. */
  private heartbeat(): Promise<void> {
    this.beating ??= this.renew().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async renew(): Promise<void> {
    const leases = [...this.held.values()].map((job) => ({ id: job.id, leaseToken: job.leaseToken }));
    if (leases.length === 0) return;
    try {
      const statuses = await this.deps.store.leasesExtend({ leases, leaseMs: this.deps.config.lease_seconds * 1000 });
      for (const status of statuses) {
        const running = this.current?.job.id === status.id ? this.current : undefined;
        if (!status.held) {
          this.held.delete(status.id);
          running?.leaseLost();
        } else if (status.cancelRequested) {
          running?.abort(ABORT.cancelled());
        }
      }
    } catch (error) {
      this.deps.log('warn', 'heartbeat failed; will try again', { err: coerceError(error) });
    }
  }
}
