import { maxRetriesFromClass } from '../policy.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import type { InsertedJob, NewJob } from '../types.js';
import { bornWith, parentIdsOf } from './flows.js';
import type { FlowStatements } from './sql/flows.js';
import type { JobStatements } from './sql/jobs.js';

/**
 * Inside a transaction: insert each job, or find the one that holds its
 * idempotency key (a holder whose key is free again gives it up first);
 * a job with parents starts as ../flow-rules.ts says. Each new job's events
 * go to `record`. The queue's own connection and an application's Database
 * both insert this way.
 */
export function insertJobs(
  jobs: Pick<JobStatements, 'insert' | 'findByKey'>,
  flows: FlowStatements,
  batch: readonly NewJob[],
  actor: string,
  now: number,
  record: (event: PlannedEvent) => void,
): InsertedJob[] {
  const inserted: InsertedJob[] = [];
  for (const job of batch) {
    const key = job.idempotencyKey;
    if (key !== null) {
      flows.freeKey.run({ class: job.class, key, now });
      const holder = jobs.findByKey.get(job.class, key) as { id: number } | undefined;
      if (holder !== undefined) {
        inserted.push({ id: holder.id, created: false });
        continue;
      }
    }
    const parents = parentIdsOf(job, inserted);
    const born = bornWith(flows, parents, job);
    const cancelled = born.status === 'CANCELLED' ? born : undefined;
    // Every field by name, not `...job`: a spread object changes shape per job, and that cost more than the insert.
    const { id } = jobs.insert.get({
      class: job.class,
      payload: job.payload,
      priority: job.priority,
      runAt: job.runAt,
      maxRetries: job.maxRetries,
      idempotencyKey: job.idempotencyKey,
      status: born.status,
      maxRetriesFromClass: maxRetriesFromClass(job),
      keyScope: job.keyScope ?? 'row',
      keyExpiresAt: job.keyExpiresAt ?? null,
      onParentFailure: job.onParentFailure ?? 'cancel',
      pendingParents: born.status === 'WAITING' ? born.pendingParents : 0,
      finishedAt: cancelled === undefined ? null : now,
      code: cancelled?.code ?? null,
      detail: cancelled?.detail ?? null,
      traceparent: job.traceparent ?? null,
      now,
    }) as { id: number };
    for (const parent of parents) flows.insertEdge.run(id, parent);
    record(EVENTS.enqueued(id, job, now, actor));
    if (cancelled !== undefined) record(EVENTS.dependencyCancelled(id, now, cancelled.code, cancelled.parent));
    inserted.push({ id, created: true });
  }
  return inserted;
}
