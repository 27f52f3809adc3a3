import type { FinishedJob } from '../src/ipc/protocol.js';
import type { Logger } from '../src/log.js';
import type { RecoveredJob } from '../src/store/types.js';

/** What happened to each job, one line each: a child's outcomes and the supervisor's take-backs. */

/** One log line per job taken back: where it went and why (`culpritJobId`: the job its worker was stopped for). */
export function logRecovery(logger: Logger, job: RecoveredJob, code: string, culpritJobId?: number): void {
  const fields = { event: 'JOB_RECOVERED', job_id: job.id, class: job.class, attempt: job.attempt, code, outcome: job.status, owner_id: job.ownerId };
  if (job.released && culpritJobId !== undefined) {
    logger.info(`job ${job.id} handed back as a victim of job ${culpritJobId} (${code}), no retry spent`, { ...fields, victim_of: culpritJobId });
  } else if (job.released) {
    logger.info(`job ${job.id} handed back (${code}), no retry spent`, fields);
  } else if (job.status === 'QUEUED') {
    logger.warn(`job ${job.id} taken back (${code}), retry at ${new Date(job.runAt ?? 0).toISOString()}`, fields);
  } else if (job.status === 'FAILED') {
    logger.error(`job ${job.id} taken back (${code}) and dead-lettered: no retries left`, { ...fields, event: 'JOB_DEAD_LETTERED' });
  } else {
    logger.info(`job ${job.id} taken back (${code}) and cancelled as requested`, fields);
  }
}

/** One log line per outcome a child wrote. */
export function logJobFinished(logger: Logger, pid: number, message: FinishedJob): void {
  const fields = { pid, job_id: message.jobId, attempt: message.attempt, duration_ms: message.durationMs, err: message.error };
  const code = message.error?.code;
  switch (message.outcome) {
    case 'SUCCEEDED':
      // Once a job: winston formats an entry before its transports drop it (about 7 µs a dropped line), so the level is asked first.
      if (logger.isLevelEnabled('debug')) logger.debug(`job ${message.jobId} succeeded`, { ...fields, event: 'JOB_SUCCEEDED' });
      return;
    case 'QUEUED':
      logger.warn(`job ${message.jobId} failed (${code}), retry scheduled`, { ...fields, event: 'JOB_RETRY_SCHEDULED' });
      return;
    case 'FAILED':
      logger.error(`job ${message.jobId} failed (${code}) and was dead-lettered`, { ...fields, event: 'JOB_DEAD_LETTERED' });
      return;
    case 'CANCELLED':
      logger.info(`job ${message.jobId} cancelled`, { ...fields, event: 'JOB_CANCELLED' });
      return;
    case 'RELEASED':
      logger.info(`job ${message.jobId} handed back, no retry spent`, { ...fields, event: 'JOB_RELEASED' });
      return;
    case 'LEASE_LOST':
      logger.warn(`job ${message.jobId}: lease lost, the child let it go`, { ...fields, event: 'LEASE_LOST' });
      return;
  }
}
