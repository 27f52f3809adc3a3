/** What happened to each job, one line each: a child's outcomes and the supervisor's take-backs. */
import type { FinishedJob } from '../src/ipc/protocol.js';
import type { Logger } from '../src/log.js';
import type { RecoveredJob, RetryAccount } from '../src/store/types.js';
import { traceLogFields } from '../src/tracing/traceparent.js';

/**
 * One log line per job taken back: where it went and why. `victimOf`: the
 * job its worker was stopped for, when this one went back free; `rule`: the
 * rule that decided, when it is not the retry account's own (poison).
 */
export function logRecovery(
  logger: Logger,
  job: RecoveredJob,
  code: string,
  options: { victimOf?: number; rule?: string } = {},
): void {
  const fields = {
    event: 'JOB_RECOVERED',
    job_id: job.id,
    class: job.class,
    attempt: job.attempt,
    code,
    outcome: job.status,
    owner_id: job.ownerId,
    ...traceLogFields(job.traceparent),
    ...retryFields(job.retry, options.rule),
  };
  const account = job.retry === undefined ? '' : `: ${accountOf(job.retry, options.rule)}`;
  if (job.released && options.victimOf !== undefined) {
    logger.info(`job ${job.id} handed back as a victim of job ${options.victimOf} (${code}), no retry spent`, {
      ...fields,
      victim_of: options.victimOf,
    });
  } else if (job.released) {
    logger.info(`job ${job.id} handed back (${code}), no retry spent`, fields);
  } else if (job.status === 'QUEUED') {
    logger.warn(
      `job ${job.id} taken back (${code})${account}; retry at ${new Date(job.runAt ?? 0).toISOString()}`,
      fields,
    );
  } else if (job.status === 'FAILED') {
    logger.error(`job ${job.id} taken back (${code}) and dead-lettered${account}`, {
      ...fields,
      event: 'JOB_DEAD_LETTERED',
    });
  } else {
    logger.info(`job ${job.id} taken back (${code}) and cancelled as requested`, fields);
  }
}

/** `attempt 3 of 6, retries left`: which run this was of those the job may have, and the rule that decided. */
function accountOf(retry: RetryAccount, rule: string = retry.rule): string {
  return `attempt ${retry.run} of ${retry.of}, ${rule}`;
}

function retryFields(retry: RetryAccount | undefined, rule?: string): Record<string, unknown> {
  return retry === undefined ? {} : { run: retry.run, runs_allowed: retry.of, rule: rule ?? retry.rule };
}

/** One log line per outcome a child wrote. */
export function logJobFinished(logger: Logger, pid: number, message: FinishedJob): void {
  const fields = {
    pid,
    job_id: message.jobId,
    attempt: message.attempt,
    duration_ms: message.durationMs,
    err: message.error,
    ...(message.trace_id === undefined ? {} : { trace_id: message.trace_id }),
    ...retryFields(message.retry),
  };
  const code = message.error?.code;
  const account = message.retry === undefined ? '' : `: ${accountOf(message.retry)}`;
  switch (message.outcome) {
    case 'SUCCEEDED':
      // Once a job: winston formats an entry before its transports drop it, wasted work at the default level, so the level is asked first.
      if (logger.isLevelEnabled('debug'))
        logger.debug(`job ${message.jobId} succeeded`, { ...fields, event: 'JOB_SUCCEEDED' });
      return;
    case 'QUEUED':
      logger.warn(`job ${message.jobId} failed (${code}), retry scheduled${account}`, {
        ...fields,
        event: 'JOB_RETRY_SCHEDULED',
      });
      return;
    case 'FAILED':
      logger.error(`job ${message.jobId} failed (${code}) and was dead-lettered${account}`, {
        ...fields,
        event: 'JOB_DEAD_LETTERED',
      });
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
