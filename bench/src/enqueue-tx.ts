/**
 * Section 4b (issue 41): an enqueue inside the application's own transaction
 * next to today's enqueue, on SQLite and on PostgreSQL. Each driver runs four
 * arms, single and bulk, plain and in the application's transaction, in
 * rounds: plain and in-transaction back to back (which goes first alternates
 * from round to round), each on a fresh queue, and the ratio taken within
 * the round, so that a noisy moment hits both arms of a pair.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { Queue } from '../../dist/src/queue/queue.js';
import { openStore } from '../../dist/src/store/open.js';
import { BUSY_TIMEOUT_MS, WAL_AUTOCHECKPOINT_PAGES } from '../../dist/src/store/sqlite/connection.js';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type Driver } from './database.js';
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
  rounds: number;
  drivers: EnqueueTxDriver[];
}

/** Issue 41's "costs no more than today's enqueue", with 5% for noise: in-transaction / plain, within a round. */
export const TX_TARGET_RATIO = 0.95;

type Shape = 'single' | 'bulk';
type Way = 'plain' | 'in_tx';

/** One arm, once its fresh queue is open (`url`: its `database:`, for SQLite the file): the seconds its jobs took. */
type Measure = (queue: Queue, url: string) => Promise<number>;

type Request = { class: string; payload: { n: number } };
const request = (n: number): Request => ({ class: BENCH_CLASS, payload: { n } });
const batchOf = (size: number, from: number) => Array.from({ length: size }, (_, i) => request(from + i));

/** Time `count` calls of `call` (each given its index), after one warm-up call off the clock (statements prepared). */
async function timed(count: number, call: (i: number) => unknown): Promise<number> {
  await call(-1);
  const started = performance.now();
  for (let i = 0; i < count; i++) await call(i);
  return (performance.now() - started) / 1000;
}

/**
 * An arm on a fresh queue: a SQLite file in a folder of its own, or a
 * PostgreSQL schema of its own (dropped after). The queue is told its class
 * (`classes`), as an application passes its config's: otherwise, on a
 * database no supervisor has served, every enqueue would ask the store
 * whether the class was ever served (two more queries, in both arms).
 */
async function onFreshQueue(ctx: BenchContext, driver: Driver, label: string, measure: Measure): Promise<number> {
  const database = benchDatabase(ctx, ctx.dirs.make(`enqueue-tx-${label}`), driver);
  try {
    const queue = new Queue(await openStore(database.url), { actor: 'bench', classes: [BENCH_CLASS] });
    try {
      return await measure(queue, database.url);
    } finally {
      await queue.close();
    }
  } finally {
    await database.dispose();
  }
}

/**
 * The application's better-sqlite3 Database on the queue's file, with the
 * pragmas of leasehold's own connection (openSqlite; WAL is the file's
 * already), so that both arms write alike: the arms compare the library's
 * two ways, not two configurations. With SQLite's default temp_store
 * (FILE), enqueueMany of 1,000 in the application's transaction ran at
 * about 0.7x plain (docs/performance.md, section 4b).
 */
async function withApplicationDatabase(file: string, work: (db: Database.Database) => Promise<number>) {
  const db = new Database(file, { timeout: BUSY_TIMEOUT_MS, fileMustExist: true });
  try {
    db.pragma('foreign_keys = ON');
    db.pragma('synchronous = NORMAL');
    db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    db.pragma('temp_store = MEMORY');
    return await work(db);
  } finally {
    db.close();
  }
}

/** The application's own pg client (the server's default settings, no schema on its search_path), ended after `work`. */
async function withApplicationClient(url: string, work: (client: pg.Client) => Promise<number>) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The application's transaction around `call`: BEGIN, the call, COMMIT. */
async function inTransaction(client: pg.Client, call: () => Promise<unknown>): Promise<void> {
  await client.query('BEGIN');
  await call();
  await client.query('COMMIT');
}

/** The four arms of a driver: ctx.sizes.enqueueTx.single enqueues, or its batches of `batch`. */
function arms(ctx: BenchContext, driver: Driver): Record<Shape, Record<Way, Measure>> {
  const { single, batches, batch } = ctx.sizes.enqueueTx;
  const singles = (add: (request: Request) => unknown) => timed(single, (i) => add(request(i)));
  const bulk = (add: (requests: Request[]) => unknown) => timed(batches, (b) => add(batchOf(batch, b * batch)));
  const plain = {
    single: (queue: Queue) => singles((r) => queue.enqueue(r)),
    bulk: (queue: Queue) => bulk((rs) => queue.enqueueMany(rs)),
  };
  if (driver === 'sqlite')
    return {
      single: {
        plain: plain.single,
        in_tx: (queue, file) =>
          withApplicationDatabase(file, (db) => {
            const enqueue = db.transaction((r: Request) => queue.enqueueSync(r, { tx: db }));
            return singles((r) => enqueue.immediate(r));
          }),
      },
      bulk: {
        plain: plain.bulk,
        in_tx: (queue, file) =>
          withApplicationDatabase(file, (db) => {
            const enqueue = db.transaction((rs: Request[]) => queue.enqueueManySync(rs, { tx: db }));
            return bulk((rs) => enqueue.immediate(rs));
          }),
      },
    };
  return {
    single: {
      plain: plain.single,
      in_tx: (queue) =>
        withApplicationClient(ctx.pgUrl, (tx) => singles((r) => inTransaction(tx, () => queue.enqueue(r, { tx })))),
    },
    bulk: {
      plain: plain.bulk,
      in_tx: (queue) =>
        withApplicationClient(ctx.pgUrl, (tx) => bulk((rs) => inTransaction(tx, () => queue.enqueueMany(rs, { tx })))),
    },
  };
}

const CALLS: Record<Driver, Record<Shape, Record<Way, string>>> = {
  sqlite: {
    single: {
      plain: "await queue.enqueue(req): its own transaction on the queue's connection",
      in_tx:
        "db.transaction(() => queue.enqueueSync(req, { tx: db })).immediate() on the application's Database (same file)",
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

const ORDER: Way[][] = [
  ['plain', 'in_tx'],
  ['in_tx', 'plain'],
];

export async function runEnqueueTx(ctx: BenchContext): Promise<EnqueueTxSection> {
  const { single, batches, batch, rounds } = ctx.sizes.enqueueTx;
  const jobs: Record<Shape, number> = { single, bulk: batches * batch };
  const drivers: EnqueueTxDriver[] = [];
  for (const driver of ['sqlite', 'postgres'] as const) {
    const measures = arms(ctx, driver);
    const rates = { single: { plain: [], in_tx: [] }, bulk: { plain: [], in_tx: [] } } as Record<
      Shape,
      Record<Way, number[]>
    >;
    const ratios: Record<Shape, number[]> = { single: [], bulk: [] };
    for (let round = 0; round < rounds; round++) {
      for (const shape of ['single', 'bulk'] as const) {
        const rate = {} as Record<Way, number>;
        for (const way of ORDER[round % 2]!) {
          ctx.progress(`enqueue-tx ${driver} round ${round + 1}/${rounds}: ${shape}, ${way}`);
          const seconds = await onFreshQueue(ctx, driver, `${shape}-${way}`, measures[shape][way]);
          rate[way] = jobs[shape] / seconds;
          rates[shape][way].push(rate[way]);
        }
        ratios[shape].push(rate.in_tx / rate.plain);
      }
    }
    const arm = (shape: Shape, way: Way): EnqueueTxArm => ({
      jobs_per_sec: summarize(rates[shape][way]),
      call: CALLS[driver][shape][way],
    });
    drivers.push({
      driver,
      single: {
        jobs: single,
        plain: arm('single', 'plain'),
        in_tx: arm('single', 'in_tx'),
        in_tx_over_plain: summarize(ratios.single, 2),
      },
      bulk: {
        batches,
        batch,
        plain: arm('bulk', 'plain'),
        in_tx: arm('bulk', 'in_tx'),
        in_tx_over_plain: summarize(ratios.bulk, 2),
      },
    });
  }
  return {
    unit: 'jobs/s',
    method:
      `${single} single enqueues and ${batches} enqueueMany of ${batch} per arm, each arm on a fresh queue (SQLite file or PostgreSQL schema), ` +
      'one warm-up call off the clock; plain and in-transaction back to back in each round, which goes first alternating',
    rounds,
    drivers,
  };
}
