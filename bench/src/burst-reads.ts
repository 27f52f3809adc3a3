/**
 * Sections 20 (issue 43, SQLite) and 20b (issue 53, PostgreSQL): the operator's reads right after a burst, from
 * outside. A burst of no-op jobs runs through `supervise`; as the last one finishes, rounds begin, each:
 * `leasehold stats --json` on the burst's queue, the same on a nearly empty queue (side by side, so that a noisy
 * moment weighs on both), and a GET of the dashboard's overview page from a `leasehold dashboard` started on the
 * burst's queue.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clockTicksPerSecond, cpuTicks, pollDrain, sleep, summarize, waitFor, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase, type BenchDatabase, type Driver } from './database.js';
import { describeClass, fillQueue, SUCCEEDED_COUNT, withSupervisor, writeNoopHandler } from './leasehold.js';
import { LEASEHOLD_CLI } from './processes.js';
import { fmt, stat, table } from './table.js';

/** The overview page after the burst (ms, the slowest median of the rounds). */
export const BURST_OVERVIEW_TARGET_MS = 100;
/** `stats --json` after the burst over the same on a nearly empty queue (medians, within the run). */
export const BURST_STATS_TARGET_RATIO = 1.5;
/** A round lasts at least this long: the overview as a page polled every 2 s sees it (its counts kept for 1 s). */
const ROUND_MS = 2_000;

export interface BurstReadsSection {
  driver: Driver;
  jobs: number;
  config: string;
  /** From the supervisor's spawn to the last job finished. */
  drain_seconds: number;
  /** CPU (user + system) of the supervisor and its children over the drain, per 1,000 jobs. */
  cpu_ms_per_1k: number;
  rounds: number;
  /** `leasehold --db <burst file> stats --json`, spawn to exit. */
  stats_json_ms: Stat;
  /** The same on a file of one job. */
  stats_json_empty_ms: Stat;
  /** stats_json_ms / stats_json_empty_ms, medians. */
  stats_ratio: number;
  /** GET / of the dashboard, first view after it started (not in the target). */
  overview_first_ms: number;
  /** GET / in the rounds after it. */
  overview_ms: Stat;
}

/** `node ...args` to its end; its wall time in ms. */
function wallMs(args: string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 60_000 });
  if (result.status !== 0)
    throw new Error(
      `node ${args.join(' ')} exited ${String(result.status ?? result.signal)}: ${result.stderr.toString()}`,
    );
  return performance.now() - started;
}

/** GET `url` to the end of its body; its wall time in ms. A failure says what the dashboard (`log`) printed. */
async function getMs(url: string, log: string): Promise<number> {
  const started = performance.now();
  try {
    const response = await fetch(url);
    await response.text();
    if (!response.ok) throw new Error(`status ${response.status}`);
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    throw new Error(
      `GET ${url}: ${String(error)} ${String(cause ?? '')}; the dashboard said: ${readFileSync(log, 'utf8')}`,
    );
  }
  return performance.now() - started;
}

/** A nearly empty queue: one job, enqueued by the CLI. */
function emptyQueue(ctx: BenchContext, driver: Driver): BenchDatabase {
  const database = benchDatabase(ctx, ctx.dirs.make(`burst-reads-empty-${driver}`), driver);
  // An enqueue creates no queue (27c19a4): the queue is made first, as an operator would.
  wallMs([LEASEHOLD_CLI, '--db', database.url, 'migrate']);
  wallMs([LEASEHOLD_CLI, '--db', database.url, 'enqueue', 'bench', '--allow-unknown-class', '--payload', '{}']);
  return database;
}

/** The burst's reads on `driver`, after `jobs` no-op jobs. */
export async function runBurstReads(ctx: BenchContext, driver: Driver, jobs: number): Promise<BurstReadsSection> {
  const rounds = ctx.sizes.burstRounds;
  const empty = emptyQueue(ctx, driver);
  ctx.progress(`burst-reads on ${driver}: ${jobs} no-op jobs through supervise, then ${rounds} rounds of reads`);
  try {
    return await burstThenReads(ctx, driver, jobs, empty.url);
  } finally {
    await empty.dispose();
  }
}

async function burstThenReads(
  ctx: BenchContext,
  driver: Driver,
  jobs: number,
  empty: string,
): Promise<BurstReadsSection> {
  const rounds = ctx.sizes.burstRounds;
  return withSupervisor(
    ctx,
    `burst-reads-${driver}`,
    {
      driver,
      handler: writeNoopHandler,
      processes: 2,
      claimBatch: ctx.claimBatch,
      before: (queue) => fillQueue(queue, jobs),
    },
    async ({ config, database, supervisor }) => {
      const started = performance.now();
      const counter = await database.counter();
      let ticks = 0;
      const family = () => [supervisor.pid, ...supervisor.process.noteDescendants()];
      const tickTotal = () => family().reduce((sum, pid) => sum + (cpuTicks(pid) ?? 0), 0);
      try {
        const before = tickTotal();
        const timing = await pollDrain(counter.count(SUCCEEDED_COUNT), jobs, {
          intervalMs: 50,
          timeoutMs: ctx.sizes.drainTimeoutMs,
          alive: () => supervisor.deadReason(),
        });
        ticks = tickTotal() - before;
        const drainSeconds = (timing.endMs - started) / 1000;
        // Right after the last job: the dashboard starts while the first round's commands run.
        const dashboardOut = join(supervisor.dir, 'dashboard.out');
        ctx.processes.startNode(
          'dashboard',
          LEASEHOLD_CLI,
          ['--db', database.url, 'dashboard', '--port', '0', '--json'],
          { output: dashboardOut },
        );
        const stats: number[] = [];
        const statsEmpty: number[] = [];
        const overview: number[] = [];
        let url: string | undefined;
        let overviewFirst = 0;
        for (let round = 0; round < rounds; round++) {
          const roundStarted = performance.now();
          stats.push(wallMs([LEASEHOLD_CLI, '--db', database.url, 'stats', '--json']));
          statsEmpty.push(wallMs([LEASEHOLD_CLI, '--db', empty, 'stats', '--json']));
          if (url === undefined) {
            url = await waitFor('the dashboard to listen', () => dashboardUrl(dashboardOut), {
              intervalMs: 20,
              timeoutMs: 30_000,
            });
            overviewFirst = await getMs(url, dashboardOut);
          } else overview.push(await getMs(url, dashboardOut));
          await sleep(Math.max(0, ROUND_MS - (performance.now() - roundStarted)));
        }
        const statsMs = summarize(stats, 1);
        const statsEmptyMs = summarize(statsEmpty, 1);
        return {
          driver,
          jobs,
          config: describeClass(config),
          drain_seconds: Math.round(drainSeconds * 10) / 10,
          cpu_ms_per_1k: Math.round((ticks * 1000) / clockTicksPerSecond() / (jobs / 1000)),
          rounds,
          stats_json_ms: statsMs,
          stats_json_empty_ms: statsEmptyMs,
          stats_ratio: Math.round((statsMs.median / statsEmptyMs.median) * 100) / 100,
          overview_first_ms: Math.round(overviewFirst * 10) / 10,
          overview_ms: summarize(overview, 1),
        };
      } finally {
        await counter.close();
      }
    },
  );
}

/** The URL the dashboard printed (`--json`: one document), once it has. */
function dashboardUrl(file: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { url: string }).url;
  } catch {
    return undefined; // not printed yet, or not whole yet
  }
}

/** Section 20's lines in the table (20b on PostgreSQL). */
export function burstReadsLines(b: BurstReadsSection): string[] {
  const [number, issue, where, queue] =
    b.driver === 'sqlite' ? ['20', '43', 'SQLite', 'file'] : ['20b', '53', 'PostgreSQL', 'schema'];
  return [
    `${number}. reads right after a burst (issue ${issue}): ${fmt(b.jobs)} no-op jobs through supervise on ${where} (${b.config}), drained in ${fmt(b.drain_seconds)} s at ${fmt(b.cpu_ms_per_1k)} ms CPU per 1,000 jobs; then ${b.rounds} rounds, one every 2 s (ms)`,
    table(
      ['read, from outside', 'value'],
      [
        [`\`stats --json\` on the burst's ${queue}, spawn to exit`, stat(b.stats_json_ms)],
        [`\`stats --json\` on a ${queue} of one job, same rounds`, stat(b.stats_json_empty_ms)],
        ['ratio of the medians', fmt(b.stats_ratio)],
        ['overview page (GET /), first view (not in the target)', fmt(b.overview_first_ms)],
        ['overview page (GET /), the rounds after it', stat(b.overview_ms)],
      ],
    ),
  ];
}
