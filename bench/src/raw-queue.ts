/**
 * The raw loop's two writes (sections 3, 3b, 9 and 18): only what a claim and
 * a fenced complete must do, `perTx` jobs at a time; `bookkeeping` (SQLite)
 * adds the attempt and timeline rows the data model asks for. No events
 * beyond those, no IPC.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { clientConfig, parsePostgresUrl } from '../../dist/src/store/postgres/connection.js';
import { WAL_AUTOCHECKPOINT_PAGES } from '../../dist/src/store/sqlite/connection.js';

export type Claimed = { id: number; lease_token: string; payload: string; attempts: number; claimed_at: number };

/** The two writes of the loop, on one driver. */
export interface RawQueue {
  claim(now: number): Promise<Claimed[]>;
  /** Throws unless every row was still held by its token. */
  complete(rows: Claimed[], now: number): Promise<void>;
  close(): Promise<void>;
}

const owner = `raw-${process.pid}`;
const LEASE_MS = 30_000;

function lost(done: number, rows: Claimed[]): never {
  throw new Error(`lease lost: ${rows.length - done} of ${rows.length} jobs were not completed`);
}

export function sqliteQueue(database: string, perTx: number, bookkeeping: boolean): RawQueue {
  // The pragmas of leasehold's own connections (src/store/sqlite/connection.ts).
  const db = new Database(database, { timeout: 5_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  const claim =
    db.prepare(`UPDATE jobs SET status = 'CLAIMED', owner_id = @owner, lease_token = lower(hex(randomblob(16))),
      claimed_at = @now, lease_expires_at = @expires, attempts = attempts + 1
    WHERE id IN (SELECT id FROM jobs WHERE status = 'QUEUED' AND class = 'bench' AND run_at <= @now
                 ORDER BY priority DESC, run_at, id LIMIT @limit)
    RETURNING id, lease_token, payload, attempts, claimed_at`);
  const complete = db.prepare(`UPDATE jobs SET status = 'SUCCEEDED', finished_at = @now, lease_expires_at = NULL
    WHERE id = @id AND lease_token = @token AND status = 'CLAIMED'`);
  const history = bookkeeping ? sqliteHistory(db) : undefined;
  const claimTx = db.transaction((now: number) => {
    const rows = claim.all({ owner, now, expires: now + LEASE_MS, limit: perTx }) as Claimed[];
    for (const row of rows) history?.begin(row, now);
    return rows;
  });
  const completeTx = db.transaction((rows: Claimed[], now: number) => {
    let done = 0;
    for (const row of rows) {
      done += complete.run({ id: row.id, token: row.lease_token, now }).changes;
      history?.end(row, now);
    }
    if (done !== rows.length) lost(done, rows);
  });
  return {
    claim: (now) => busyRetry(() => claimTx.immediate(now)),
    complete: (rows, now) => busyRetry(() => completeTx.immediate(rows, now)),
    close: async () => void db.close(),
  };
}

/** The bookkeeping writes of one job: its attempt when claimed; the attempt's end and the timeline when completed. */
function sqliteHistory(db: Database.Database) {
  const attemptBegin = db.prepare(
    `INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status) VALUES (?, ?, ?, ?, ?, 'RUNNING')`,
  );
  const attemptEnd = db.prepare(
    `UPDATE job_attempts SET status = 'SUCCEEDED', finished_at = ? WHERE job_id = ? AND attempt = ? AND lease_token = ?`,
  );
  const event = db.prepare(`INSERT INTO job_events (job_id, ts, event, actor, detail) VALUES (?, ?, ?, ?, ?)`);
  return {
    begin: (row: Claimed, now: number) => attemptBegin.run(row.id, row.attempts, owner, row.lease_token, now),
    end: (row: Claimed, now: number) => {
      attemptEnd.run(now, row.id, row.attempts, row.lease_token);
      event.run(
        row.id,
        now,
        'STARTED',
        'worker',
        JSON.stringify({ attempt: row.attempts, owner_id: owner, claimed_at: row.claimed_at }),
      );
      event.run(row.id, now, 'SUCCEEDED', 'worker', JSON.stringify({ attempt: row.attempts }));
    },
  };
}

/** SQLITE_BUSY past the busy timeout is rare (BEGIN IMMEDIATE waits); retry it like the store does. */
async function busyRetry<T>(work: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return work();
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || attempt > 8) throw error;
      await sleep(5 * 2 ** attempt);
    }
  }
}

export async function postgresQueue(database: string, perTx: number): Promise<RawQueue> {
  const client = new pg.Client(clientConfig(parsePostgresUrl(database)));
  await client.connect();
  const claim = {
    name: 'raw.claim',
    text: `UPDATE jobs SET status = 'CLAIMED', owner_id = $1, lease_token = replace(gen_random_uuid()::text, '-', ''),
        claimed_at = $2, lease_expires_at = $3, attempts = attempts + 1
      WHERE id = ANY (ARRAY (SELECT id FROM jobs WHERE status = 'QUEUED' AND class = 'bench' AND run_at <= $2
                             ORDER BY priority DESC, run_at, id LIMIT $4 FOR NO KEY UPDATE SKIP LOCKED))
      RETURNING id, lease_token, payload, attempts, claimed_at`,
  };
  const complete = {
    name: 'raw.complete',
    text: `UPDATE jobs AS j SET status = 'SUCCEEDED', finished_at = $3, lease_expires_at = NULL
      FROM unnest($1::bigint[], $2::text[]) AS b(id, lease_token)
      WHERE j.id = b.id AND j.lease_token = b.lease_token AND j.status = 'CLAIMED'`,
  };
  return {
    claim: async (now) => (await client.query<Claimed>({ ...claim, values: [owner, now, now + LEASE_MS, perTx] })).rows,
    complete: async (rows, now) => {
      const done =
        (await client.query({ ...complete, values: [rows.map((r) => r.id), rows.map((r) => r.lease_token), now] }))
          .rowCount ?? 0;
      if (done !== rows.length) lost(done, rows);
    },
    close: () => client.end(),
  };
}

/** Claim and complete until the queue is empty; how many jobs it completed. */
export async function drainRaw(queue: RawQueue): Promise<number> {
  let done = 0;
  for (;;) {
    const rows = await queue.claim(Date.now());
    if (rows.length === 0) return done;
    for (const row of rows) JSON.parse(row.payload); // what a worker does with a payload before its handler
    await queue.complete(rows, Date.now());
    done += rows.length;
  }
}
