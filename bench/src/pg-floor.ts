/**
 * Section 25: the floor of the PostgreSQL server's work per job (issue 53).
 * On leasehold's own schema (its migrations: every table, index, check and
 * foreign key), a bare loop writes only the rows the spec's data model names
 * for a job that succeeds at its first try, with no bookkeeping: the bulk
 * enqueue (a `jobs` row), then per batch one statement that ends the held
 * jobs (the `jobs` row and its attempt) and claims the next (the `jobs` row,
 * an attempt inserted RUNNING), fenced on each job's lease token, in
 * FLOOR_CONNECTIONS connections as section 9's 2 children. With `timeline`,
 * also the three timeline rows leasehold writes (ENQUEUED, STARTED,
 * SUCCEEDED). Beside it, in the same rounds, leasehold with 2 children and
 * graphile-worker's local queue in 1 process: the server's CPU per job over
 * the whole run, the enqueue included (section 9's `server, enqueue incl.`).
 * What lies between the floor and leasehold is the cost of how leasehold
 * writes those rows, not of the rows. And leasehold once more with
 * BESIDE_LISTENERS other connections listening on the database, as a
 * cluster's children do: a notification wakes each of them, whatever its
 * channel.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openStore } from '../../dist/src/store/open.js';
import { JOBS_CHANNEL } from '../../dist/src/store/postgres/sql/notify.js';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase } from './database.js';
import { withServerCpu, type DrainRun } from './drain.js';
import { graphileDrain } from './graphile.js';
import { FLOOR_CLAIM_BATCH, floorEnqueueSql, floorLoop } from './floor-loop.js';
import { ratioOf, runRounds, runsOf, type Figure } from './rounds.js';
import { columnsTable, figures, stat } from './table.js';
import { leaseholdDrain } from './throughput.js';

const FLOOR_CONNECTIONS = 2;
const ENQUEUE_CHUNK = 1000;
const FLOOR_WORKER = fileURLToPath(new URL('./floor-worker.js', import.meta.url));
const BESIDE_LISTENERS = 40;

type Arm = 'floor' | 'floor-timeline' | 'leasehold' | 'leasehold-listeners' | 'graphile';
const ARMS: { key: Arm; label: string }[] = [
  { key: 'floor', label: "the spec's rows alone: jobs and attempts" },
  { key: 'floor-timeline', label: 'the same with the three timeline rows' },
  {
    key: 'leasehold',
    label: `leasehold, 1 supervisor × ${FLOOR_CONNECTIONS} children, claim_batch ${FLOOR_CLAIM_BATCH}`,
  },
  { key: 'leasehold-listeners', label: `the same, ${BESIDE_LISTENERS} other connections listening on the database` },
  { key: 'graphile', label: "graphile-worker's local queue, 1 process" },
];

export interface FloorRow {
  arm: Arm;
  label: string;
  jobs_per_sec: Stat;
  server_cpu_whole_ms_per_1k_jobs: Stat;
}

export interface FloorSection {
  method: string;
  jobs: number;
  results: FloorRow[];
  /** Within each round, the server's CPU per job over graphile-worker's. */
  over_graphile: { arm: Arm; ratio: Stat }[];
}

/** A plain connection to the bench's server. */
async function connected(ctx: BenchContext): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: ctx.pgUrl });
  await client.connect();
  return client;
}

/**
 * The bare loop: enqueue in bulk, then `connections` connections settle and
 * claim until none is left: in this process, or each in a process of its own
 * (floor-worker.ts), as hosts would. The jobs it ended are counted after.
 */
export async function floorDrain(
  ctx: BenchContext,
  timeline: boolean,
  { connections = FLOOR_CONNECTIONS, apart = false } = {},
): Promise<DrainRun> {
  const jobs = ctx.sizes.jobs;
  const dir = ctx.dirs.make(`floor-${timeline ? 'timeline' : 'rows'}-${connections}${apart ? '-apart' : ''}`);
  const database = benchDatabase(ctx, dir, 'postgres');
  try {
    await (await openStore(database.url)).close(); // leasehold's schema, by its migrations
    const schema = new URL(database.url).searchParams.get('schema')!;
    const connect = async () => {
      const client = await connected(ctx);
      await client.query(`SET search_path TO ${pg.escapeIdentifier(schema)}`);
      return client;
    };
    const enqueue = floorEnqueueSql(timeline);
    const inProcess = async (index: number) => {
      const client = await connect();
      try {
        await floorLoop(client, index, timeline);
      } finally {
        await client.end();
      }
    };
    const inWorker = async (index: number) => {
      const worker = ctx.processes.startNode(
        `floor-${index}`,
        FLOOR_WORKER,
        [ctx.pgUrl, schema, String(index), timeline ? '1' : '0'],
        {
          output: join(dir, `floor-${index}.log`),
        },
      );
      const exit = await worker.exited;
      ctx.processes.forget(worker);
      if (exit.exitCode !== 0) throw new Error(`floor worker ${index} exited ${exit.exitCode ?? exit.signal}`);
    };
    return await withServerCpu(jobs, async () => {
      const producer = await connect();
      try {
        for (let first = 0; first < jobs; first += ENQUEUE_CHUNK)
          await producer.query(enqueue, [Date.now(), first, Math.min(jobs, first + ENQUEUE_CHUNK) - 1]);
        const started = performance.now();
        await Promise.all(Array.from({ length: connections }, (_, c) => (apart ? inWorker(c) : inProcess(c))));
        const seconds = (performance.now() - started) / 1000;
        const { rows } = await producer.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM jobs WHERE status = 'SUCCEEDED'",
        );
        if (rows[0]!.n !== jobs) throw new Error(`the floor loop ended ${rows[0]!.n} of ${jobs} jobs`);
        return { jobsPerSec: jobs / seconds, jobsPerSecFromStart: jobs / seconds };
      } finally {
        await producer.end();
      }
    });
  } finally {
    await database.dispose();
  }
}

/** A drain while `count` connections LISTEN on the jobs channel, as idle children of other hosts would. */
async function withListeners<R>(ctx: BenchContext, count: number, work: () => Promise<R>): Promise<R> {
  const clients: pg.Client[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const client = await connected(ctx);
      clients.push(client);
      await client.query(`LISTEN ${JOBS_CHANNEL}`);
    }
    return await work();
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

const SERVER_CPU_WHOLE: Figure = (run) => run.serverCpuWholeMsPer1k;

export async function runPgFloor(ctx: BenchContext): Promise<FloorSection> {
  const drains: Record<Arm, () => Promise<DrainRun>> = {
    floor: () => floorDrain(ctx, false),
    'floor-timeline': () => floorDrain(ctx, true),
    leasehold: () => leaseholdDrain(ctx, FLOOR_CONNECTIONS, FLOOR_CLAIM_BATCH, 'postgres'),
    'leasehold-listeners': () =>
      withListeners(ctx, BESIDE_LISTENERS, () => leaseholdDrain(ctx, FLOOR_CONNECTIONS, FLOOR_CLAIM_BATCH, 'postgres')),
    graphile: () => graphileDrain(ctx, 'local-queue-1'),
  };
  const rounds = await runRounds(
    ctx,
    'PostgreSQL floor',
    ARMS.map(({ key, label }) => ({ key, label, drain: drains[key] })),
  );
  return {
    method:
      `${ctx.sizes.jobs} no-op jobs enqueued in bulk (${ENQUEUE_CHUNK} a statement) and drained; the floor: on leasehold's schema, ` +
      `${FLOOR_CONNECTIONS} connections each ending its ${FLOOR_CLAIM_BATCH} held jobs and claiming the next ${FLOOR_CLAIM_BATCH} in one statement ` +
      '(the job rows and their attempts; with the timeline, ENQUEUED, STARTED and SUCCEEDED rows too), fenced on each lease token; ' +
      "server CPU: the postmaster and its backends from before the enqueue to after the drain (section 9's `server, enqueue incl.`)",
    jobs: ctx.sizes.jobs,
    results: ARMS.map(({ key, label }) => {
      const runs = runsOf(rounds, key);
      return {
        arm: key,
        label,
        jobs_per_sec: summarize(runs.map((run) => run.jobsPerSec)),
        server_cpu_whole_ms_per_1k_jobs: summarize(runs.map((run) => run.serverCpuWholeMsPer1k ?? Number.NaN)),
      };
    }),
    over_graphile: ARMS.filter(({ key }) => key !== 'graphile').map(({ key }) => ({
      arm: key,
      ratio: ratioOf(rounds, key, 'graphile', SERVER_CPU_WHOLE)!,
    })),
  };
}

/** The section's lines in the table. */
export function floorLines(f: FloorSection): string[] {
  return [
    `25. the floor of the PostgreSQL server's work per job (issue 53): ${f.method} (jobs/s; the server's CPU ms per 1k jobs)`,
    columnsTable(f.results, [
      ['what', (r) => r.label],
      ['jobs/s', (r) => stat(r.jobs_per_sec)],
      ['server, enqueue incl.', (r) => stat(r.server_cpu_whole_ms_per_1k_jobs)],
    ]),
    figures(
      ["within a round, the server's CPU per job", "over graphile-worker's"],
      f.over_graphile.map(({ arm, ratio }) => [ARMS.find((a) => a.key === arm)!.label, ratio]),
    ),
  ];
}
