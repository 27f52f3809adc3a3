import { maxRetriesFromClass } from '../policy.js';
import type { InsertedJob, NewJob } from '../types.js';
import { first, rows, type Db } from './connection.js';
import { JOB_SQL } from './sql/jobs.js';

/** Bulk inserts go in chunks: bounded statements, whatever the batch. */
const INSERT_CHUNK_JOBS = 500;
const INSERT_CHUNK_BYTES = 8 * 1024 * 1024;

/** Inside a transaction: insert jobs in order, in bulk where no idempotency key is given; returns them in the same order. */
export async function insertJobs(db: Db, jobs: NewJob[], now: number): Promise<InsertedJob[]> {
  const inserted: InsertedJob[] = [];
  for (const chunk of insertChunks(jobs)) {
    inserted.push(
      ...(chunk.keyed ? [await insertKeyed(db, chunk.jobs[0]!, now)] : await insertUnkeyed(db, chunk.jobs, now)),
    );
  }
  return inserted;
}

async function insertUnkeyed(db: Db, jobs: NewJob[], now: number): Promise<InsertedJob[]> {
  const column = <K extends keyof NewJob>(key: K) => jobs.map((job) => job[key]);
  const bind = [
    now,
    column('class'),
    column('priority'),
    column('payload'),
    column('runAt'),
    column('maxRetries'),
    jobs.map(maxRetriesFromClass),
  ];
  const ids = (await rows<{ id: number }>(db, JOB_SQL.insertMany, bind)).map((row) => row.id).sort((a, b) => a - b);
  return ids.map((id) => ({ id, created: true }));
}

/**
 * Insert, or find the job that holds the key already (committed by another
 * producer, who is waited for, or inserted earlier in this batch). A holder
 * deleted between the two statements (retention) frees the key: try again.
 */
async function insertKeyed(db: Db, job: NewJob, now: number): Promise<InsertedJob> {
  const bind = [
    job.class,
    job.payload,
    job.priority,
    job.runAt,
    job.maxRetries,
    job.idempotencyKey,
    now,
    maxRetriesFromClass(job),
  ];
  for (let attempt = 0; attempt < 3; attempt++) {
    const created = await first<{ id: number }>(db, JOB_SQL.insertKeyed, bind);
    if (created !== undefined) return { id: created.id, created: true };
    const existing = await first<{ id: number }>(db, JOB_SQL.findByKey, [job.class, job.idempotencyKey]);
    if (existing !== undefined) return { id: existing.id, created: false };
  }
  throw new Error(`idempotency key of class ${job.class} kept conflicting with a job that then vanished`);
}

/** Consecutive jobs without a key go in bulk chunks; a keyed job goes alone (it may match an existing one). */
function* insertChunks(jobs: NewJob[]): Generator<{ keyed: boolean; jobs: NewJob[] }> {
  let bulk: NewJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    if (job.idempotencyKey !== null || bulk.length >= INSERT_CHUNK_JOBS || bytes >= INSERT_CHUNK_BYTES) {
      if (bulk.length > 0) yield { keyed: false, jobs: bulk };
      bulk = [];
      bytes = 0;
    }
    if (job.idempotencyKey !== null) {
      yield { keyed: true, jobs: [job] };
      continue;
    }
    bulk.push(job);
    bytes += job.payload.length;
  }
  if (bulk.length > 0) yield { keyed: false, jobs: bulk };
}
