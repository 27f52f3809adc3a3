import { maxRetriesFromClass } from '../policy.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import type { InsertedJob, NewJob } from '../types.js';
import type { JobStatements } from './sql/jobs.js';

/**
 * Inside a transaction: insert each job, or find the one that holds its
 * idempotency key; each new job's ENQUEUED event goes to `record`. The
 * queue's own connection and an application's Database both insert this way.
 */
export function insertJobs(
  jobs: Pick<JobStatements, 'insert' | 'findByKey'>,
  batch: readonly NewJob[],
  actor: string,
  now: number,
  record: (event: PlannedEvent) => void,
): InsertedJob[] {
  return batch.map((job) => {
    if (job.idempotencyKey !== null) {
      const existing = jobs.findByKey.get(job.class, job.idempotencyKey) as { id: number } | undefined;
      if (existing !== undefined) return { id: existing.id, created: false };
    }
    const { id } = jobs.insert.get({ ...job, maxRetriesFromClass: maxRetriesFromClass(job), now }) as { id: number };
    record(EVENTS.enqueued(id, job, now, actor));
    return { id, created: true };
  });
}
