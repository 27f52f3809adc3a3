/**
 * What a class's pool hears of its children, and the bookkeeping it does on
 * what it hears: each message (readiness or a failure to start, jobs' starts
 * and outcomes for the metrics, the log and the take-back's count of the
 * deaths a job caused, log lines, last words, database trouble), and each
 * end (its jobs taken back, its exit recorded and logged). What becomes of
 * the child's slot is the restart policy's (restart-policy.ts).
 */
import type { ChildToSupervisor, FinishedJob, SuccessTally } from '../src/ipc/protocol.js';
import type { Logger } from '../src/log.js';
import { dbFaultOf } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import { describeChildEnd } from './exit-reason.js';
import { logJobFinished } from './job-log.js';
import type { MetricsSink } from './metrics-sink.js';
import { isCrash } from './restart-policy.js';
import type { ChildExit, PoolChild } from './supervised-child.js';
import type { JobTakeBack } from './take-back.js';

/** The pool's parts a message reaches. */
export interface Hearing {
  /** The pool's logger, labelled with its class. */
  logger: Logger;
  metrics: MetricsSink;
  store: Pick<SupervisorStore, 'workerHeartbeat' | 'workerExit'>;
  takeBack: Pick<JobTakeBack, 'finished' | 'takeBack'>;
  className: string;
}

export function hearChild(child: PoolChild, message: ChildToSupervisor, pool: Hearing): void {
  const labels = { pid: child.pid };
  switch (message.type) {
    case 'ready':
      child.markReady();
      pool.logger.info('child ready', { ...labels, event: 'CHILD_READY' });
      void pool.store.workerHeartbeat({ id: child.workerId, state: 'ready' }).catch(() => undefined);
      return;
    case 'startup-failed':
      child.startupFailed(message.error);
      pool.logger.error(`child could not start: ${message.error.message}`, { ...labels, err: message.error });
      return;
    case 'jobs-started':
      pool.metrics.jobsStarted(pool.className, message.count);
      return;
    case 'jobs-finished':
      for (const job of message.jobs) jobFinished(child, job, pool);
      return;
    case 'jobs-succeeded':
      jobsSucceeded(child, message.tally, pool);
      return;
    case 'log':
      pool.logger.log(message.level, message.msg, { ...message.fields, ...labels });
      return;
    case 'last-words':
      child.diedOf(message);
      return;
    case 'pong':
      return; // heard: ChildHandle keeps the time
    case 'db-error':
      pool.metrics.dbError(message.kind);
      return;
    case 'db-outage':
      child.reportOutage(message.outage ?? undefined);
      return;
  }
}

function jobFinished(child: PoolChild, message: FinishedJob, pool: Hearing): void {
  child.jobsFinishedBy(1);
  pool.takeBack.finished(message.jobId);
  pool.metrics.jobFinished(pool.className, message.outcome, message.durationMs);
  if (message.cpuMs !== undefined && message.peakRssBytes !== undefined)
    pool.metrics.jobCost(pool.className, { cpuMs: message.cpuMs, peakRssBytes: message.peakRssBytes });
  logJobFinished(pool.logger, child.pid, message);
}

/** A child's successes since it last said: only a retried job's can clear a crash count (SuccessTally.retriedJobIds). */
function jobsSucceeded(child: PoolChild, tally: SuccessTally, pool: Hearing): void {
  child.jobsFinishedBy(tally.count);
  for (const jobId of tally.retriedJobIds) pool.takeBack.finished(jobId);
  pool.metrics.jobsSucceeded(pool.className, tally);
  for (const job of tally.jobs ?? []) logJobFinished(pool.logger, child.pid, job);
}

/**
 * A child ended: take back its jobs, record its exit in the registry, and log
 * it. With the database away, the child is replaced all the same: its leases
 * run out and the sweeper takes its jobs back.
 */
export async function recordChildEnd(child: PoolChild, exit: ChildExit, pool: Hearing): Promise<void> {
  const end = describeChildEnd(child, exit.code, exit.signal);
  const killed = child.killed !== undefined;
  const state = child.startupError !== undefined ? 'failed' : killed ? 'killed' : 'exited';
  await pool.takeBack
    .takeBack(child, end.text, pool.className)
    .then(() => pool.store.workerExit({ id: child.workerId, state, exitCode: exit.code, exitSignal: exit.signal }))
    .catch((error: unknown) => {
      if (dbFaultOf(error) === undefined) throw error;
      pool.logger.warn(
        `could not record the exit of child ${child.pid} (the database is away): the sweeper takes its jobs back when their leases run out`,
        { pid: child.pid },
      );
    });
  const stack = child.lastWords.uncaught?.stack;
  const fields = {
    event: 'CHILD_EXITED',
    pid: child.pid,
    exit_code: exit.code,
    exit_signal: exit.signal,
    reason: end.reason,
    ...(stack ? { stack } : {}),
  };
  pool.logger.log(isCrash({ code: exit.code, killed }) ? 'warn' : 'info', `child exited: ${end.text}`, fields);
}
