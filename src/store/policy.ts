import type { FailureInput, NewJob, RetryAccount } from './types.js';

/**
 * What counts as a run: a claim, but for those handed back without spending a
 * retry (releases, at shutdown or before the handler began). A job runs at most
 * max_retries + 1 times. The one TypeScript reading of the rule; each driver's
 * SQL says the same once, as RUNS in its sql/jobs.ts.
 */
export function runsOf(job: { attempts: number; releases: number }): number {
  return job.attempts - job.releases;
}

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
    run: runsOf(facts),
    of: facts.maxRetries + 1,
    rule,
  });
  if (facts.cancelRequested) return { status: 'CANCELLED', retry: account('cancel requested') };
  if (!error.retryable) return { status: 'FAILED', retry: account('not retryable') };
  return runsOf(facts) > facts.maxRetries
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
