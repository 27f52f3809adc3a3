/**
 * Section 3: the raw ceiling. A minimal jobs table with leasehold's claim
 * index shape (`jobs_claim ON jobs (class, priority DESC, run_at, id) WHERE
 * status = 'QUEUED'`, as in src/store/sqlite/migrations.ts), filled with
 * the same number of jobs, drained by N bare loops (raw-worker.ts).
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollDrain, steadyRate } from './common.js';
import type { BenchContext } from './context.js';
import { SqliteCounter } from './database.js';
import type { Managed } from './processes.js';
import { POLL_MS, type DrainRun } from './throughput.js';

const WORKER = fileURLToPath(new URL('./raw-worker.js', import.meta.url));

const SCHEMA = `
  CREATE TABLE jobs (
    id               INTEGER PRIMARY KEY,
    class            TEXT    NOT NULL,
    status           TEXT    NOT NULL,
    priority         INTEGER NOT NULL DEFAULT 0,
    payload          TEXT    NOT NULL,
    created_at       INTEGER NOT NULL,
    run_at           INTEGER NOT NULL,
    claimed_at       INTEGER,
    lease_expires_at INTEGER,
    finished_at      INTEGER,
    owner_id         TEXT,
    lease_token      TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX jobs_claim ON jobs (class, priority DESC, run_at, id) WHERE status = 'QUEUED';
  CREATE INDEX jobs_status ON jobs (status);
`;

export async function rawDrain(ctx: BenchContext, processes: number, perTx: number): Promise<DrainRun> {
  const jobs = ctx.sizes.jobs;
  const dir = ctx.dirs.make(`raw-p${processes}-t${perTx}`);
  const database = join(dir, 'raw.db');
  const db = new Database(database);
  db.pragma('journal_mode = WAL');
  db.exec(SCHEMA);
  const insert = db.prepare(`INSERT INTO jobs (class, status, payload, created_at, run_at) VALUES ('bench', 'QUEUED', ?, ?, ?)`);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < jobs; i++) insert.run(JSON.stringify({ n: i }), now, now);
  })();
  db.close();

  const counter = new SqliteCounter(database);
  const started = performance.now();
  const workers: Managed[] = [];
  try {
    for (let i = 0; i < processes; i++) workers.push(ctx.processes.startNode(`raw-${i}`, WORKER, [database, String(perTx)], { output: join(dir, `worker-${i}.out`) }));
    const timing = await pollDrain(counter.count(`SELECT count(*) FROM jobs WHERE status = 'SUCCEEDED'`), jobs, {
      intervalMs: POLL_MS.sqlite,
      timeoutMs: ctx.sizes.drainTimeoutMs,
      // A raw worker exits 0 when it finds the queue empty; any other exit is a failure.
      alive: () => (workers.some((w) => w.exit !== undefined && w.exit.exitCode !== 0) ? `a raw worker failed; see ${dir}` : undefined),
    });
    return { jobsPerSec: steadyRate(timing, jobs), jobsPerSecFromStart: jobs / ((timing.endMs - started) / 1000) };
  } finally {
    await counter.close();
    await Promise.all(workers.map((w) => w.stop(5_000)));
  }
}
