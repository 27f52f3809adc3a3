import pg from 'pg';
import { InvalidInputError } from '../../errors.js';
import { maxRetriesFromClass } from '../policy.js';
import { EVENTS } from '../timeline.js';
import type { InsertedJob, NewJob } from '../types.js';
import { rows, type Db, type Statement } from './connection.js';

const INVALID_PARAMETER = '22023';

/** Bulk inserts go in chunks: bounded statements, whatever the batch. */
const INSERT_CHUNK_JOBS = 500;
const INSERT_CHUNK_BYTES = 8 * 1024 * 1024;

interface InsertRow {
  out_id: number | null;
  out_created: boolean | null;
  out_sqlstate: string | null;
  out_message: string | null;
}

/**
 * Insert the jobs in order (or find the holders of their keys), record each
 * new one's ENQUEUED event and wake its class's workers at commit: one call
 * of leasehold_insert_jobs_guarded per chunk. A failure inside it comes back
 * as a row, the call's own writes undone; it is thrown here as the server's
 * error, so a deadlock is still retried by the transaction around.
 */
export async function insertAnnounced(
  db: Db,
  statement: Statement,
  jobs: NewJob[],
  actor: string,
  now: number,
): Promise<InsertedJob[]> {
  const inserted: InsertedJob[] = [];
  for (const chunk of insertChunks(jobs)) {
    const edges = chunkEdges(chunk, inserted);
    const planned = chunk.map((job) => EVENTS.enqueued(0, job, now, actor));
    const column = <K extends keyof NewJob>(key: K) => chunk.map((job) => job[key]);
    const result = await rows<InsertRow>(db, statement, [
      now,
      actor,
      planned[0]!.event,
      column('class'),
      column('priority'),
      column('payload'),
      column('runAt'),
      column('maxRetries'),
      chunk.map(maxRetriesFromClass),
      column('idempotencyKey'),
      planned.map((event) => event.detail),
      chunk.map((job) => job.keyScope ?? 'row'),
      chunk.map((job) => job.keyExpiresAt ?? null),
      chunk.map((job) => job.onParentFailure ?? 'cancel'),
      edges.dependents,
      edges.parentIds,
      edges.parentPositions,
      chunk.map((job) => job.traceparent ?? null),
    ]);
    const failure = result[0];
    if (failure?.out_sqlstate != null) throw serverError(failure.out_sqlstate, failure.out_message ?? '');
    inserted.push(...result.map((row) => ({ id: row.out_id!, created: row.out_created! })));
  }
  return inserted;
}

/**
 * The chunk's edges, one element each (positions 1-based, as the function
 * reads them): a parent earlier in this chunk by its position, one in an
 * earlier chunk by the id it was given there.
 */
function chunkEdges(chunk: NewJob[], earlier: InsertedJob[]) {
  const edges = {
    dependents: [] as number[],
    parentIds: [] as (number | null)[],
    parentPositions: [] as (number | null)[],
  };
  const offset = earlier.length;
  chunk.forEach((job, index) => {
    const edge = (id: number | null, position: number | null) => {
      edges.dependents.push(index + 1);
      edges.parentIds.push(id);
      edges.parentPositions.push(position);
    };
    for (const id of job.parentIds ?? []) edge(id, null);
    for (const at of job.parentIndexes ?? []) {
      if (at < offset) edge(earlier[at]!.id, null);
      else edge(null, at - offset + 1);
    }
  });
  return edges;
}

/** The function's refusals (22023, `INVALID_INPUT:<FIELD>: why`) as the library's own; anything else as the server's. */
function serverError(sqlstate: string, message: string): Error {
  const refused = sqlstate === INVALID_PARAMETER ? /^INVALID_INPUT:([A-Z_]+): (.*)$/s.exec(message) : null;
  if (refused !== null) return new InvalidInputError(refused[1]!, refused[2]!);
  return Object.assign(new pg.DatabaseError(message, 0, 'error'), { code: sqlstate, severity: 'ERROR' });
}

/** Consecutive jobs, at most INSERT_CHUNK_JOBS of them or about INSERT_CHUNK_BYTES of payload. */
function* insertChunks(jobs: NewJob[]): Generator<NewJob[]> {
  let chunk: NewJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    if (chunk.length >= INSERT_CHUNK_JOBS || bytes >= INSERT_CHUNK_BYTES) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(job);
    bytes += job.payload.length;
  }
  if (chunk.length > 0) yield chunk;
}
