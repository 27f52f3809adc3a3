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
import pg from 'pg';
import { openStore } from '../../dist/src/store/open.js';
import { JOBS_CHANNEL } from '../../dist/src/store/postgres/sql/notify.js';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase } from './database.js';
import { withServerCpu, type DrainRun } from './drain.js';
import { graphileDrain } from './graphile.js';
import { BENCH_CLASS } from './leasehold.js';
import { ratioOf, runRounds, runsOf, type Figure } from './rounds.js';
import { columnsTable, figures, stat } from './table.js';
import { leaseholdDrain } from './throughput.js';

const FLOOR_CONNECTIONS = 2;
const CLAIM_BATCH = 64;
const ENQUEUE_CHUNK = 1000;
const LEASE_MS = 30_000;
const BESIDE_LISTENERS = 40;

type Arm = 'floor' | 'floor-timeline' | 'leasehold' | 'leasehold-listeners' | 'graphile';
const ARMS: { key: Arm; label: string }[] = [
  { key: 'floor', label: "the spec's rows alone: jobs and attempts" },
  { key: 'floor-timeline', label: 'the same with the three timeline rows' },
  { key: 'leasehold', label: `leasehold, 1 supervisor × ${FLOOR_CONNECTIONS} children, claim_batch ${CLAIM_BATCH}` },
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

const enqueueSql = (timeline: boolean) => `WITH added AS (
    INSERT INTO jobs (class, status, payload, created_at, run_at, max_retries)
    SELECT '${BENCH_CLASS}', 'QUEUED', '{"n":' || n || '}', $1, $1, 3 FROM generate_series($2::int, $3::int) AS n RETURNING id)
  ${timeline ? `INSERT INTO job_events (job_id, ts, event, actor) SELECT id, $1, 'ENQUEUED', '${BENCH_CLASS}' FROM added` : 'SELECT count(*) FROM added'}`;

// $1 the held ids, $2 their claim's token prefix (a job's token is the prefix and its id), $3 now, $4 owner, $5 limit, $6 the next claim's prefix.
const settleAndClaimSql = (timeline: boolean) => `WITH done AS (
    UPDATE jobs AS j SET status = 'SUCCEEDED', result = 'null', finished_at = $3, lease_expires_at = NULL
    WHERE j.id = ANY($1::bigint[]) AND j.lease_token = $2 || j.id AND j.status = 'RUNNING' AND j.lease_expires_at > $3
    RETURNING j.id, j.attempts),
  ended AS (
    UPDATE job_attempts AS a SET status = 'SUCCEEDED', finished_at = $3
    FROM done AS d WHERE a.job_id = d.id AND a.attempt = d.attempts),
  ${timeline ? `timeline AS (INSERT INTO job_events (job_id, ts, event, actor) SELECT d.id, $3, e.event, $4 FROM done AS d, unnest(ARRAY['STARTED', 'SUCCEEDED']) AS e(event)),` : ''}
  picked AS (
    SELECT id FROM jobs WHERE class = '${BENCH_CLASS}' AND status = 'QUEUED' AND run_at <= $3
    ORDER BY priority DESC, run_at, id LIMIT $5 FOR UPDATE SKIP LOCKED),
  claimed AS (
    UPDATE jobs AS j SET status = 'RUNNING', owner_id = $4, lease_token = $6 || j.id, claimed_at = $3, started_at = $3,
      lease_expires_at = $3 + ${LEASE_MS}, attempts = j.attempts + 1
    FROM picked AS p WHERE j.id = p.id RETURNING j.id, j.attempts, j.payload),
  attempts_begun AS (
    INSERT INTO job_attempts (job_id, attempt, owner_id, lease_token, started_at, status)
    SELECT id, attempts, $4, $6 || id, $3, 'RUNNING' FROM claimed)
  SELECT id, payload FROM claimed`;

/** A plain connection to the bench's server. */
async function connected(ctx: BenchContext): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: ctx.pgUrl });
  await client.connect();
  return client;
}

/** The bare loop: enqueue in bulk, then FLOOR_CONNECTIONS connections settle and claim until none is left. */
async function floorDrain(ctx: BenchContext, timeline: boolean): Promise<DrainRun> {
  const jobs = ctx.sizes.jobs;
  const database = benchDatabase(ctx, ctx.dirs.make(`floor-${timeline ? 'timeline' : 'rows'}`), 'postgres');
  try {
    await (await openStore(database.url)).close(); // leasehold's schema, by its migrations
    const schema = new URL(database.url).searchParams.get('schema')!;
    const connect = async () => {
      const client = await connected(ctx);
      await client.query(`SET search_path TO ${pg.escapeIdentifier(schema)}`);
      return client;
    };
    const enqueue = enqueueSql(timeline);
    const settleAndClaim = settleAndClaimSql(timeline);
    return await withServerCpu(jobs, async () => {
      const producer = await connect();
      try {
        for (let first = 0; first < jobs; first += ENQUEUE_CHUNK)
          await producer.query(enqueue, [Date.now(), first, Math.min(jobs, first + ENQUEUE_CHUNK) - 1]);
      } finally {
        await producer.end();
      }
      const started = performance.now();
      let done = 0;
      await Promise.all(
        Array.from({ length: FLOOR_CONNECTIONS }, async (_, c) => {
          const client = await connect();
          try {
            let held: string[] = [];
            let token = '';
            for (let claim = 1; ; claim++) {
              const next = `${c}.${claim}.`;
              const { rows } = await client.query<{ id: string }>({
                name: 'floor',
                text: settleAndClaim,
                values: [held, token, Date.now(), `floor-${c}`, CLAIM_BATCH, next],
              });
              done += held.length;
              if (rows.length === 0) break;
              held = rows.map((row) => row.id);
              token = next;
            }
          } finally {
            await client.end();
          }
        }),
      );
      if (done !== jobs) throw new Error(`the floor loop ended ${done} of ${jobs} jobs`);
      const seconds = (performance.now() - started) / 1000;
      return { jobsPerSec: jobs / seconds, jobsPerSecFromStart: jobs / seconds };
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
    leasehold: () => leaseholdDrain(ctx, FLOOR_CONNECTIONS, CLAIM_BATCH, 'postgres'),
    'leasehold-listeners': () =>
      withListeners(ctx, BESIDE_LISTENERS, () => leaseholdDrain(ctx, FLOOR_CONNECTIONS, CLAIM_BATCH, 'postgres')),
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
      `${FLOOR_CONNECTIONS} connections each ending its ${CLAIM_BATCH} held jobs and claiming the next ${CLAIM_BATCH} in one statement ` +
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
