import { setTimeout as sleep } from 'node:timers/promises';
import { coerceError } from '../src/errors.js';
import type { ChildToSupervisor } from '../src/protocol.js';
import type { ClaimedJob } from '../src/store/types.js';
import { ABORT, JobRun, type JobRunDeps } from './job-run.js';

export interface ClaimLoopDeps extends JobRunDeps {
  ownerId: string;
  send: (message: ChildToSupervisor) => void;
}

/**
 * A child's work: claim a batch of its class, run each job in turn, repeat;
 * sleep poll_seconds when the queue has nothing due. stop() ends the loop;
 * jobs claimed but not yet started are handed back without spending a retry.
 */
export class ClaimLoop {
  private running: Promise<void> | undefined;
  private stopping = false;
  private current: JobRun | undefined;
  private readonly idle = new AbortController();

  constructor(private readonly deps: ClaimLoopDeps) {}

  start(): void {
    this.running ??= this.loop();
  }

  /** Stop claiming and wait for the job in hand (if `abortReason` is given, abort it first). */
  async stop(abortReason?: string): Promise<void> {
    this.stopping = true;
    this.idle.abort();
    if (abortReason !== undefined) this.current?.abort(ABORT.shutdown(abortReason));
    await this.running;
  }

  /** The job in hand, for a stop that cannot wait for the handler. */
  get inHand(): JobRun | undefined {
    return this.current;
  }

  private async loop(): Promise<void> {
    const { config } = this.deps;
    while (!this.stopping) {
      const batch = await this.claim();
      if (batch.length === 0) {
        await sleep(config.poll_seconds * 1000, undefined, { signal: this.idle.signal }).catch(() => undefined);
        continue;
      }
      for (const [index, job] of batch.entries()) {
        if (this.stopping) {
          await this.handBack(batch.slice(index));
          break;
        }
        await this.runOne(job);
      }
    }
  }

  /** A failed claim (database busy past every retry, say) is logged and tried again after a poll interval. */
  private async claim(): Promise<ClaimedJob[]> {
    const { config } = this.deps;
    try {
      return await this.deps.store.jobClaim({
        classes: [config.name],
        ownerId: this.deps.ownerId,
        limit: config.claim_batch,
        leaseMs: config.lease_seconds * 1000,
      });
    } catch (error) {
      this.deps.log('error', 'claim failed', { err: coerceError(error) });
      return [];
    }
  }

  private async runOne(job: ClaimedJob): Promise<void> {
    const run = new JobRun(this.deps, job);
    if (!(await run.start())) {
      this.deps.send({ type: 'job-finished', jobId: job.id, attempt: job.attempt, outcome: 'LEASE_LOST', durationMs: 0 });
      return;
    }
    this.current = run;
    this.deps.send({ type: 'job-started', jobId: job.id, attempt: job.attempt, leaseToken: job.leaseToken });
    try {
      const result = await run.run();
      this.deps.send({ type: 'job-finished', jobId: job.id, attempt: job.attempt, ...result });
    } finally {
      this.current = undefined;
    }
  }

  private async handBack(jobs: ClaimedJob[]): Promise<void> {
    for (const job of jobs) {
      try {
        await this.deps.store.jobReleaseIfHeld({ id: job.id, leaseToken: job.leaseToken, reason: 'child stopping' });
      } catch (error) {
        this.deps.log('warn', 'could not hand back a claimed job', { job_id: job.id, err: coerceError(error) });
      }
    }
  }
}
