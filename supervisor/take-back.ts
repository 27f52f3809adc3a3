import type { Logger } from '../src/log.js';
import type { RecoveredJob, RecoverParams, RetryDelay, SupervisorStore } from '../src/store/types.js';
import { endDeadChildAttempts } from './attempt-spans.js';
import { logRecovery } from './job-log.js';
import { lastWordsText } from './last-words.js';
import type { MetricsSink } from './metrics-sink.js';
import type { PoolChild } from './supervised-child.js';

/** Kills that blame none of the child's jobs: they go back without spending a retry. */
const RELEASING_KILLS: ReadonlySet<string> = new Set(['shutdown', 'reload', 'stalled']);

/** A job that has taken down its child this many times in a row is failed as poison. */
export const POISON_THRESHOLD = 3;

/** The store calls a take-back makes. */
export type TakeBackStore = Pick<SupervisorStore, 'leasesRecoverByOwner' | 'leasesReleaseByOwner'>;

export interface TakeBackDeps {
  store: TakeBackStore;
  logger: Logger;
  metrics: MetricsSink;
  supervisorId: string;
  retryDelay: RetryDelay;
  /** Jobs that came back to the queue: wake the class's children when each is due. */
  wakeFor: (jobs: readonly RecoveredJob[]) => void;
}

/**
 * The fast path of guarantee 4 (Nothing stays RUNNING): a child is gone, so
 * its jobs come back now, not when the lease runs out. When one job is to
 * blame (the one killed for, or the only one a one-slot child was running),
 * it alone spends a retry, and is failed as poison once it has taken down
 * POISON_THRESHOLD children in a row; the child's other jobs go back free,
 * as its victims.
 */
export class JobTakeBack {
  /** Job id -> how many children in a row died while running it. */
  private readonly deaths = new Map<number, number>();

  constructor(private readonly deps: TakeBackDeps) {}

  /** The job's outcome was written: whatever came before, this run did not take its child down. */
  finished(jobId: number): void {
    this.deaths.delete(jobId);
  }

  /** Take back the jobs of `child` of class `className`, which ended as `end` says. */
  async takeBack(child: PoolChild, end: string, className: string): Promise<void> {
    const { store, retryDelay, metrics } = this.deps;
    if (child.killed !== undefined && RELEASING_KILLS.has(child.killed.reason)) {
      const released = await store.leasesReleaseByOwner({
        ownerId: child.workerId,
        actor: this.deps.supervisorId,
        reason: child.killed.reason,
      });
      for (const job of released) logRecovery(this.deps.logger, job, 'LEASE:RELEASED');
      const reason = child.killed.reason;
      endDeadChildAttempts(child.started, released, () => ({ outcome: 'released', reason }));
      metrics.jobsRecovered(released, 'LEASE:RELEASED', 'child_exit');
      this.deps.wakeFor(released);
      return;
    }
    const params: RecoverParams = {
      errorCode: child.killed?.code ?? 'WORKER:CRASHED',
      errorDetail: `child ${end}`,
      errorStack: lastWordsText(child.pid, end, child.lastWords),
      event: child.killed === undefined ? 'RECOVERED' : child.killed.reason === 'max_runtime' ? 'TIMED_OUT' : 'KILLED',
      actor: this.deps.supervisorId,
      retryDelay,
    };
    const culprit = child.killed !== undefined ? child.killed.culprit : child.soleSuspect();
    let poison: string | undefined;
    // Poison is a job whose runs take their child down; one the supervisor killed on purpose ends with its own cause (TIMEOUT:MAX_RUNTIME, say) when its retries run out.
    if (culprit !== undefined && child.killed === undefined) {
      const deaths = (this.deaths.get(culprit.jobId) ?? 0) + 1;
      this.deaths.set(culprit.jobId, deaths);
      if (deaths >= POISON_THRESHOLD) {
        this.deaths.delete(culprit.jobId);
        poison = `poison: it took down its child ${deaths} times in a row`;
        Object.assign(params, {
          errorCode: 'WORKER:POISON',
          errorDetail: `took down its child ${deaths} times in a row (last: ${params.errorCode}, ${params.errorDetail})`,
          retryable: false,
        });
      }
    }
    const culpritCost = culprit?.usage.cost();
    const recovered = await store.leasesRecoverByOwner({
      ...params,
      ownerId: child.workerId,
      culpritJobId: culprit?.jobId,
      culpritCost,
    });
    if (culpritCost !== undefined) metrics.jobCost(className, culpritCost);
    const logger = this.deps.logger.child({ pid: child.pid });
    for (const job of recovered)
      logRecovery(logger, job, params.errorCode, {
        victimOf: culprit?.jobId,
        rule: job.id === culprit?.jobId ? poison : undefined,
      });
    const error = { code: params.errorCode, message: `${params.errorDetail}\n${params.errorStack}` };
    endDeadChildAttempts(child.started, recovered, (job) =>
      job.released
        ? { outcome: 'released', reason: `victim of job ${culprit?.jobId} (${params.errorCode})` }
        : { outcome: 'crashed', error },
    );
    metrics.jobsRecovered(recovered, params.errorCode, 'child_exit');
    this.deps.wakeFor(recovered);
  }
}
