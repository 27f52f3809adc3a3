import type { Logger } from '../src/log.js';
import type { RecoveredJob } from '../src/store/types.js';

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
