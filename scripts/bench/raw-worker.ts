/**
 * The raw ceiling (section 3): `node dist/scripts/bench/raw-worker.js <database> <per-tx>`.
 * A bare better-sqlite3 loop doing only what a claim and a fenced complete
 * must: claim `per-tx` jobs in one transaction (UPDATE ... WHERE id IN
 * (SELECT ... ORDER BY priority DESC, run_at, id LIMIT n) RETURNING, a fresh
 * random token per row), then complete them in one transaction, each with
 * `WHERE id = ? AND lease_token = ? AND status = 'CLAIMED'`. No attempts, no
 * events, no IPC. Exits when the queue is empty.
 */
import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';

const [database, perTxText] = process.argv.slice(2);
const perTx = Number(perTxText);
if (database === undefined || !Number.isInteger(perTx) || perTx < 1) {
  process.stderr.write('usage: raw-worker <database> <per-tx>\n');
  process.exit(2);
}

// The pragmas of leasehold's own connections (src/store/sqlite/connection.ts).
const db = new Database(database, { timeout: 5_000 });
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');

const owner = `raw-${process.pid}`;
const LEASE_MS = 30_000;
const claim = db.prepare(`UPDATE jobs SET status = 'CLAIMED', owner_id = @owner, lease_token = lower(hex(randomblob(16))),
    claimed_at = @now, lease_expires_at = @expires, attempts = attempts + 1
  WHERE id IN (SELECT id FROM jobs WHERE status = 'QUEUED' AND class = 'bench' AND run_at <= @now
               ORDER BY priority DESC, run_at, id LIMIT @limit)
  RETURNING id, lease_token, payload`);
const complete = db.prepare(`UPDATE jobs SET status = 'SUCCEEDED', finished_at = @now, lease_expires_at = NULL
  WHERE id = @id AND lease_token = @token AND status = 'CLAIMED'`);

type Claimed = { id: number; lease_token: string; payload: string };
const claimTx = db.transaction((now: number) => claim.all({ owner, now, expires: now + LEASE_MS, limit: perTx }) as Claimed[]);
const completeTx = db.transaction((rows: Claimed[], now: number) => {
  for (const row of rows) {
    if (complete.run({ id: row.id, token: row.lease_token, now }).changes !== 1) throw new Error(`lease lost on job ${row.id}`);
  }
});

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

for (;;) {
  const rows = await busyRetry(() => claimTx.immediate(Date.now()));
  if (rows.length === 0) break;
  for (const row of rows) JSON.parse(row.payload); // what a worker does with a payload before its handler
  await busyRetry(() => completeTx.immediate(rows, Date.now()));
}
db.close();
