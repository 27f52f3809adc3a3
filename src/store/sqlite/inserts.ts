import { maxRetriesFromClass } from '../policy.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import type { InsertedJob, NewJob } from '../types.js';
import type { BornState } from '../flow-rules.js';
import { bornWith, parentIdsOf } from './flows.js';
import type { MultiRowInserter } from './multi-row.js';
import type { FlowStatements } from './sql/flows.js';
import type { JobStatements } from './sql/jobs.js';

/** The statements an insert uses; `plainRows` inserts PLAIN_JOB_INSERT's rows. */
export interface JobInserts {
  jobs: Pick<JobStatements, 'insert' | 'findByKey'>;
  flows: FlowStatements;
  plainRows: MultiRowInserter;
}

/** A job with no key to look up and no parents to read: its row is known before it is written. */
const isPlain = (job: NewJob): boolean =>
  job.idempotencyKey === null && (job.parentIds?.length ?? 0) === 0 && (job.parentIndexes?.length ?? 0) === 0;

/**
 * Inside a transaction: insert each job, or find the one that holds its
 * idempotency key (a holder whose key is free again gives it up first);
 * a job with parents starts as ../flow-rules.ts says. Each new job's events
 * go to `record`. The queue's own connection and an application's Database
 * both insert this way.
 *
 * A run of plain jobs is written several rows a statement (insertPlain):
 * a bulk enqueue pays a statement's fixed cost once per 64 jobs, not once
 * a job.
 */
export function insertJobs(
  statements: JobInserts,
  batch: readonly NewJob[],
  actor: string,
  now: number,
  record: (event: PlannedEvent) => void,
): InsertedJob[] {
  const { jobs, flows } = statements;
  const inserted: InsertedJob[] = [];
  let plain: NewJob[] = [];
  const writePlain = () => {
    if (plain.length > 0) insertPlain(statements, plain, actor, now, record, inserted);
    plain = [];
  };
  for (const job of batch) {
    if (isPlain(job)) {
      plain.push(job);
      continue;
    }
    // Earlier jobs first: ids follow the batch's order, and a parent named by its place must have its id.
    writePlain();
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
    const id = insertOne(jobs, job, born, now);
    for (const parent of parents) flows.insertEdge.run(id, parent);
    record(EVENTS.enqueued(id, job, now, actor));
    if (cancelled !== undefined) record(EVENTS.dependencyCancelled(id, now, cancelled.code, cancelled.parent));
    inserted.push({ id, created: true });
  }
  writePlain();
  return inserted;
}

/** Inside a transaction: one job's row, with the id AUTOINCREMENT gives it. */
function insertOne(jobs: JobInserts['jobs'], job: NewJob, born: BornState, now: number): number {
  const cancelled = born.status === 'CANCELLED' ? born : undefined;
  // Every field by name, not `...job`: a spread object changes shape per job, and that cost more than the insert.
  const row = jobs.insert.get({
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
  return row.id;
}

/**
 * Inside a transaction: plain jobs, QUEUED, each added to `inserted`, the
 * first by the one-row insert, the rest with the ids that follow its own.
 * Ids are given, not read back,
 * since SQLite promises no order for a multi-row RETURNING; and the first
 * statement is a write, so that an application's deferred transaction takes
 * the write lock at once rather than read first and find its snapshot stale.
 */
function insertPlain(
  { jobs, plainRows }: JobInserts,
  batch: readonly NewJob[],
  actor: string,
  now: number,
  record: (event: PlannedEvent) => void,
  inserted: InsertedJob[],
): void {
  const first = insertOne(jobs, batch[0]!, { status: 'QUEUED' }, now);
  plainRows.run(
    batch
      .slice(1)
      .map((job, index) => [
        first + 1 + index,
        job.class,
        job.priority,
        job.payload,
        now,
        job.runAt,
        job.maxRetries,
        maxRetriesFromClass(job),
        job.keyScope ?? 'row',
        job.onParentFailure ?? 'cancel',
        job.traceparent ?? null,
      ]),
  );
  // One by one: a spread of a batch of 100,000 into push() would pass more arguments than a call takes.
  batch.forEach((job, index) => {
    record(EVENTS.enqueued(first + index, job, now, actor));
    inserted.push({ id: first + index, created: true });
  });
}
