/**
 * Section 4b (issue 41): an enqueue inside the application's own transaction
 * next to today's enqueue, on SQLite and on PostgreSQL, singles and bulk.
 * In each run the two arms of a pair (plain, in the application's
 * transaction) have a fresh queue each, open side by side, and take turns
 * by blocks (A, B, B, A, A, B…), so that a noisy moment hits both; the
 * ratio is taken within the run.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { Queue } from '../../dist/src/queue/queue.js';
import { openStore } from '../../dist/src/store/open.js';
import { BUSY_TIMEOUT_MS, WAL_AUTOCHECKPOINT_PAGES } from '../../dist/src/store/sqlite/connection.js';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type BenchDatabase, type Driver } from './database.js';
import { BENCH_CLASS } from './leasehold.js';

export interface EnqueueTxArm {
  jobs_per_sec: Stat;
  call: string;
}

export interface EnqueueTxDriver {
  driver: Driver;
  single: { jobs: number; plain: EnqueueTxArm; in_tx: EnqueueTxArm; in_tx_over_plain: Stat };
  bulk: { batches: number; batch: number; plain: EnqueueTxArm; in_tx: EnqueueTxArm; in_tx_over_plain: Stat };
}

export interface EnqueueTxSection {
  unit: 'jobs/s';
  method: string;
  runs: number;
  blocks: number;
  drivers: EnqueueTxDriver[];
}

/** Issue 41's "costs no more than today's enqueue", with 5% for noise: in-transaction / plain, within a run. */
export const TX_TARGET_RATIO = 0.95;

type Shape = 'single' | 'bulk';
type Way = 'plain' | 'in_tx';
type Request = { class: string; payload: { n: number } };

const request = (n: number): Request => ({ class: BENCH_CLASS, payload: { n } });

/** An arm on its open queue: its i-th call (a job, or a batch), and what to close after. */
interface Arm {
  call(i: number): unknown;
  close(): Promise<void>;
}

/** Opens an arm on a fresh queue (`url`: its `database:`, for SQLite the file). */
type OpenArm = (queue: Queue, url: string) => Promise<Arm>;

/**
 * The application's better-sqlite3 Database on the queue's file, with the
 * pragmas of leasehold's own connection (openSqlite; WAL is the file's
 * already), so that both arms write alike: the arms compare the library's
 * two ways, not two configurations. With SQLite's default temp_store
 * (FILE), enqueueMany of 1,000 in the application's transaction ran at
 * about 0.7x plain (docs/performance.md, section 4b).
 */
function applicationDatabase(file: string): Database.Database {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS, fileMustExist: true });
  try {
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma('temp_store = MEMORY');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The application's own pg client: the server's default settings, no schema on its search_path. */
async function applicationClient(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** The application's transaction around `call`: BEGIN, the call, COMMIT. */
async function inTransaction(client: pg.Client, call: () => Promise<unknown>): Promise<void> {
  await client.query('BEGIN');
  await call();
  await client.query('COMMIT');
}

const nothing = async () => undefined;

/** The four arms of a driver; `jobsOf(i)` is the requests of a bulk arm's i-th call. */
function arms(
  ctx: BenchContext,
  driver: Driver,
  jobsOf: (i: number) => Request[],
): Record<Shape, Record<Way, OpenArm>> {
  const one = (i: number) => request(i);
  const plain: Record<Shape, OpenArm> = {
    single: async (queue) => ({ call: (i) => queue.enqueue(one(i)), close: nothing }),
    bulk: async (queue) => ({ call: (i) => queue.enqueueMany(jobsOf(i)), close: nothing }),
  };
  if (driver === 'sqlite') {
    const onDatabase =
      <T>(add: (queue: Queue, db: Database.Database, work: T) => unknown, work: (i: number) => T): OpenArm =>
      async (queue, file) => {
        const db = applicationDatabase(file);
        const enqueue = db.transaction((w: T) => add(queue, db, w));
        return { call: (i) => enqueue.immediate(work(i)), close: async () => void db.close() };
      };
    return {
      single: { plain: plain.single, in_tx: onDatabase((queue, db, r) => queue.enqueueSync(r, { tx: db }), one) },
      bulk: { plain: plain.bulk, in_tx: onDatabase((queue, db, rs) => queue.enqueueManySync(rs, { tx: db }), jobsOf) },
    };
  }
  const onClient =
    (add: (queue: Queue, tx: pg.Client, i: number) => Promise<unknown>): OpenArm =>
    async (queue) => {
      const tx = await applicationClient(ctx.pgUrl);
      return { call: (i) => inTransaction(tx, () => add(queue, tx, i)), close: () => tx.end() };
    };
  return {
    single: { plain: plain.single, in_tx: onClient((queue, tx, i) => queue.enqueue(one(i), { tx })) },
    bulk: { plain: plain.bulk, in_tx: onClient((queue, tx, i) => queue.enqueueMany(jobsOf(i), { tx })) },
  };
}

/** A pair's arm: its fresh database, its queue and the arm open on them. */
interface Open {
  database: BenchDatabase;
  queue?: Queue;
  arm?: Arm;
}

/**
 * The queue is told its class (`classes`), as an application passes its
 * config's: otherwise, on a database no supervisor has served, every enqueue
 * would ask the store whether the class was ever served (two more queries,
 * in both arms).
 */
async function openArm(ctx: BenchContext, driver: Driver, label: string, opening: OpenArm, into: Open[]) {
  const open: Open = { database: benchDatabase(ctx, ctx.dirs.make(`enqueue-tx-${label}`), driver) };
  into.push(open);
  open.queue = new Queue(await openStore(open.database.url), { actor: 'bench', classes: [BENCH_CLASS] });
  open.arm = await opening(open.queue, open.database.url);
  return open.arm;
}

async function closeAll(opened: Open[]): Promise<void> {
  for (const open of opened) {
    try {
      await open.arm?.close();
      await open.queue?.close();
    } finally {
      await open.database.dispose();
    }
  }
}

/**
 * One run of a pair: `calls` calls of each arm in `blocks` blocks, taking
 * turns (plain first in even blocks, so A B B A A B…), after one warm-up
 * call of each off the clock (statements prepared). Seconds per arm.
 */
async function runPair(
  ctx: BenchContext,
  driver: Driver,
  shape: Shape,
  openers: Record<Way, OpenArm>,
  calls: number,
): Promise<Record<Way, number>> {
  const { blocks } = ctx.sizes.enqueueTx;
  const opened: Open[] = [];
  try {
    const arm = {
      plain: await openArm(ctx, driver, `${shape}-plain`, openers.plain, opened),
      in_tx: await openArm(ctx, driver, `${shape}-tx`, openers.in_tx, opened),
    };
    const seconds = { plain: 0, in_tx: 0 };
    for (const way of ['plain', 'in_tx'] as const) await arm[way].call(-1);
    for (let block = 0; block < blocks; block++) {
      const from = Math.floor((block * calls) / blocks);
      const to = Math.floor(((block + 1) * calls) / blocks);
      for (const way of (block % 2 === 1 ? ['in_tx', 'plain'] : ['plain', 'in_tx']) as Way[]) {
        const started = performance.now();
        for (let i = from; i < to; i++) await arm[way].call(i);
        seconds[way] += (performance.now() - started) / 1000;
      }
    }
    return seconds;
  } finally {
    await closeAll(opened);
  }
}

const CALLS: Record<Driver, Record<Shape, Record<Way, string>>> = {
  sqlite: {
    single: {
      plain: "await queue.enqueue(req): its own transaction on the queue's connection",
      in_tx:
        "db.transaction(() => queue.enqueueSync(req, { tx: db })).immediate() on the application's Database (same file, leasehold's pragmas)",
    },
    bulk: {
      plain: 'await queue.enqueueMany(batch)',
      in_tx: 'db.transaction(() => queue.enqueueManySync(batch, { tx: db })).immediate()',
    },
  },
  postgres: {
    single: {
      plain: "await queue.enqueue(req): BEGIN … COMMIT on a connection of the queue's pool",
      in_tx: "BEGIN; await queue.enqueue(req, { tx: client }); COMMIT on the application's pg client",
    },
    bulk: {
      plain: 'await queue.enqueueMany(batch)',
      in_tx: 'BEGIN; await queue.enqueueMany(batch, { tx: client }); COMMIT',
    },
  },
};

export async function runEnqueueTx(ctx: BenchContext): Promise<EnqueueTxSection> {
  const { single, batches, batch, runs, blocks } = ctx.sizes.enqueueTx;
  const jobsOf = (b: number) => Array.from({ length: batch }, (_, i) => request(b * batch + i));
  const calls: Record<Shape, number> = { single, bulk: batches };
  const jobs: Record<Shape, number> = { single, bulk: batches * batch };
  const drivers: EnqueueTxDriver[] = [];
  for (const driver of ['sqlite', 'postgres'] as const) {
    const openers = arms(ctx, driver, jobsOf);
    const rates: Record<Shape, Record<Way, number[]>> = {
      single: { plain: [], in_tx: [] },
      bulk: { plain: [], in_tx: [] },
    };
    const ratios: Record<Shape, number[]> = { single: [], bulk: [] };
    for (let run = 0; run < runs; run++) {
      for (const shape of ['single', 'bulk'] as const) {
        ctx.progress(`enqueue-tx ${driver} run ${run + 1}/${runs}: ${shape}, plain and in the application's tx`);
        const seconds = await runPair(ctx, driver, shape, openers[shape], calls[shape]);
        rates[shape].plain.push(jobs[shape] / seconds.plain);
        rates[shape].in_tx.push(jobs[shape] / seconds.in_tx);
        ratios[shape].push(seconds.plain / seconds.in_tx);
      }
    }
    const arm = (shape: Shape, way: Way): EnqueueTxArm => ({
      jobs_per_sec: summarize(rates[shape][way]),
      call: CALLS[driver][shape][way],
    });
    const pair = (shape: Shape) => ({
      plain: arm(shape, 'plain'),
      in_tx: arm(shape, 'in_tx'),
      in_tx_over_plain: summarize(ratios[shape], 2),
    });
    drivers.push({ driver, single: { jobs: single, ...pair('single') }, bulk: { batches, batch, ...pair('bulk') } });
  }
  return {
    unit: 'jobs/s',
    method:
      `per run and arm, ${single} single enqueues, or ${batches} enqueueMany of ${batch}; the two arms of a pair on fresh queues ` +
      `(SQLite files or PostgreSQL schemas) open side by side, taking turns in ${blocks} blocks, one warm-up call each off the clock`,
    runs,
    blocks,
    drivers,
  };
}
