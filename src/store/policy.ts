import type { FailureInput, NewJob, RetryAccount } from './types.js';

/** The facts about a held job that decide where it goes after an attempt ends badly. */
export interface FailureFacts {
  attempts: number;
  releases: number;
  maxRetries: number;
  cancelRequested: boolean;
}

/**
 * Where a job goes when its attempt fails, and by which rule: CANCELLED if
 * an operator asked, FAILED (dead letter) if the error is not retryable or
 * the job has run max_retries + 1 times (attempts handed back at shutdown
 * do not count), QUEUED for another try otherwise.
 */
export function afterFailure(
  facts: FailureFacts,
  error: Pick<FailureInput, 'retryable'>,
): { status: 'QUEUED' | 'FAILED' | 'CANCELLED'; retry: RetryAccount } {
  const account = (rule: RetryAccount['rule']): RetryAccount => ({
    run: facts.attempts - facts.releases,
    of: facts.maxRetries + 1,
    rule,
  });
  if (facts.cancelRequested) return { status: 'CANCELLED', retry: account('cancel requested') };
  if (!error.retryable) return { status: 'FAILED', retry: account('not retryable') };
  return facts.attempts - facts.releases > facts.maxRetries
    ? { status: 'FAILED', retry: account('no retries left') }
    : { status: 'QUEUED', retry: account('retries left') };
}

/** A new job's jobs.max_retries_from_class (an integer column, so that both drivers read back the same value). */
export function maxRetriesFromClass(job: Pick<NewJob, 'maxRetriesFromClass'>): 0 | 1 {
  return job.maxRetriesFromClass ? 1 : 0;
}

/** Event details are short JSON; undefined fields are dropped. */
export function eventDetail(detail: Record<string, unknown>): string {
  return JSON.stringify(detail);
}
