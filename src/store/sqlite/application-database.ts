import { realpathSync } from 'node:fs';
import type { Clock } from '../../clock.js';
import { InvalidInputError } from '../../errors.js';
import type { PlannedEvent } from '../timeline.js';
import type { ApplicationDatabase, SyncProducer } from '../within.js';
import type { SqliteDb } from './connection.js';
import { insertJobs, type JobInserts } from './inserts.js';
import { MultiRowInserter } from './multi-row.js';
import { HISTORY_INSERTS } from './sql/history.js';
import { prepareFlowStatements } from './sql/flows.js';
import { PLAIN_JOB_INSERT, prepareJobStatements } from './sql/jobs.js';
import { prepareWorkerStatements } from './sql/workers.js';

/** Statements are prepared once per application Database, not once per enqueue. */
const producers = new WeakMap<ApplicationDatabase, SyncProducer>();

/**
 * The producer's statements on the application's own Database. It must be
 * open on the queue's file: a job written to another file would commit with
 * the application's rows and never be seen by a worker.
 */
export function applicationProducer(queueDb: SqliteDb, tx: ApplicationDatabase, clock: Clock): SyncProducer {
  let producer = producers.get(tx);
  if (producer === undefined) {
    if (!isDatabase(tx)) {
      throw new InvalidInputError('TX', "tx must be a better-sqlite3 Database open on the queue's file");
    }
    if (!sameFile(queueDb.name, tx.name)) {
      throw new InvalidInputError('TX', `tx is open on ${tx.name}, not on the queue's file ${queueDb.name}`);
    }
    producer = syncProducer(tx as SqliteDb, clock);
    producers.set(tx, producer);
  }
  return producer;
}

function syncProducer(db: SqliteDb, clock: Clock): SyncProducer {
  const inserts: JobInserts = {
    jobs: prepareJobStatements(db),
    flows: prepareFlowStatements(db),
    plainRows: new MultiRowInserter(db, PLAIN_JOB_INSERT),
  };
  const workers = prepareWorkerStatements(db);
  const eventRows = new MultiRowInserter(db, HISTORY_INSERTS.events);
  // Inside the application's transaction better-sqlite3 makes this a savepoint: a failure undoes only ours.
  const insert = db.transaction((batch: Parameters<SyncProducer['jobInsert']>[0]) => {
    const events: PlannedEvent[] = [];
    const inserted = insertJobs(inserts, batch.jobs, batch.actor, clock.now(), (event) => events.push(event));
    eventRows.run(events.map((e) => [e.jobId, e.ts, e.event, e.actor, e.detail]));
    return inserted;
  });
  return {
    // With none open, IMMEDIATE: take the write lock up front, as the queue's own writes do.
    jobInsert: (batch) => (db.inTransaction ? insert(batch) : insert.immediate(batch)),
    workerClassServed: (params) => workers.classServed.get(params) !== undefined,
    workerServedClasses: (params) => (workers.servedClasses.all(params) as { class: string }[]).map((row) => row.class),
  };
}

function isDatabase(tx: unknown): tx is ApplicationDatabase {
  return (
    typeof tx === 'object' &&
    tx !== null &&
    typeof (tx as ApplicationDatabase).prepare === 'function' &&
    typeof (tx as ApplicationDatabase).transaction === 'function'
  );
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}
