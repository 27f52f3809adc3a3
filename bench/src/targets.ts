/** The targets of issues 1, 5-7, 11-15, 30, 32, 41-44 and 52-54, checked against the JSON document: each a value and whether it is met. */
import { slowestMedian } from './big-store.js';
import { CLI_FLOOR_RATIO_TARGET, CLI_TARGET_COMMANDS, CLI_TARGET_MS, slowestCommand, slowestOverFloor } from './cli.js';
import type { Stat } from './common.js';
import { DASHBOARD_TARGET_MS } from './dashboard.js';
import { TX_TARGET_RATIO } from './enqueue-tx.js';
import type { GraphileMode } from './graphile.js';
import { METRICS_READ, METRICS_TARGET_MS, READ_TARGET_MS } from './reads.js';
import { realWorkTargets } from './real-work.js';
import { writerTargets } from './writer.js';
import { tracingTargets } from './tracing.js';
import { hostsTargets } from './hosts.js';
import { STORE_COST_TARGET } from './store-cost.js';
import { WAITERS_TARGET_RATIO } from './waiters.js';
import { BURST_OVERVIEW_TARGET_MS, BURST_STATS_TARGET_RATIO } from './burst-reads.js';
import type { BenchReport, Target } from './report.js';
import {
  CHILD_HEARTBEAT_TARGET_MS,
  JOB_HEARTBEAT_TARGET_MS,
  KILL_LATE_TARGET_MS,
  SCHEDULE_LATE_TARGET_MS,
} from './timeliness.js';

/** The ratio of leasehold's row with `processes` children at `batch` in a list of them (Ratio, PeerRatio). */
function findRatio(
  ratios: { leasehold: { processes: number; claim_batch: number }; ratio: Stat }[] | undefined,
  processes: number,
  batch: number,
): Stat | undefined {
  return ratios?.find((r) => r.leasehold.processes === processes && r.leasehold.claim_batch === batch)?.ratio;
}

export function checkTargets(report: BenchReport): Target[] {
  const s = report.sections;
  const batch = report.params.claim_batch;
  const targets: Target[] = [];
  const add = (id: string, target: string, value: number | undefined, met: (v: number) => boolean) =>
    targets.push({
      id,
      target,
      value: value ?? null,
      met: value === undefined || !Number.isFinite(value) ? null : met(value),
    });
  add(
    '1-vs-plainjob',
    `leasehold 2 children (claim_batch ${batch}) >= 2x plainjob 2 processes`,
    findRatio(s.plainjob?.ratios, 2, batch)?.median,
    (v) => v >= 2,
  );
  add(
    '32-cpu-1',
    `CPU per job: leasehold 1 child (claim_batch ${batch}) <= 0.5x plainjob 1 process`,
    findRatio(s.plainjob?.cpu_ratios, 1, batch)?.median,
    (v) => v <= 0.5,
  );
  add(
    '32-cpu-2',
    `CPU per job: leasehold 2 children (claim_batch ${batch}) <= 0.6x plainjob 2 processes`,
    findRatio(s.plainjob?.cpu_ratios, 2, batch)?.median,
    (v) => v <= 0.6,
  );
  const bullmq = `BullMQ concurrency ${s.bullmq?.concurrency ?? 50}`;
  add(
    '32-bullmq-1',
    `leasehold 1 child (claim_batch ${batch}) >= 1.2x ${bullmq}`,
    findRatio(s.bullmq?.ratios, 1, batch)?.median,
    (v) => v >= 1.2,
  );
  add(
    '32-bullmq-2',
    `leasehold 2 children (claim_batch ${batch}) >= 1.2x ${bullmq}`,
    findRatio(s.bullmq?.ratios, 2, batch)?.median,
    (v) => v >= 1.2,
  );
  const graphile = (mode: GraphileMode, ratios = s['graphile-worker']?.ratios) =>
    findRatio(
      ratios?.filter((r) => r.mode === mode),
      2,
      batch,
    )?.median;
  const pool = `graphile-worker ${s['graphile-worker']?.processes ?? 2} × ${s['graphile-worker']?.concurrency ?? 10}`;
  add(
    '32-pg-graphile',
    `PostgreSQL: leasehold 2 children (claim_batch ${batch}) >= 4x ${pool}`,
    graphile('plain'),
    (v) => v >= 4,
  );
  add(
    '32-pg-graphile-local',
    `PostgreSQL: leasehold 2 children (claim_batch ${batch}) >= 0.45x ${pool} in local-queue mode`,
    graphile('local-queue'),
    (v) => v >= 0.45,
  );
  add(
    '53-pg-server-cpu',
    `PostgreSQL: the server's CPU per job, enqueue included: leasehold 2 children (claim_batch ${batch}) <= 1.5x graphile-worker local queue, 1 process`,
    graphile('local-queue-1', s['graphile-worker']?.server_cpu_ratios),
    (v) => v <= 1.5,
  );
  add(
    '53-pg-graphile-local-1',
    `PostgreSQL: leasehold 2 children (claim_batch ${batch}) >= graphile-worker local queue, 1 process (jobs/s)`,
    graphile('local-queue-1'),
    (v) => v >= 1,
  );
  add(
    '1-vs-raw',
    `leasehold 2 children (claim_batch ${batch}) >= 50% of raw 10-per-tx, 2 processes`,
    findRatio(s.raw?.ratios, 2, batch)?.median,
    (v) => v >= 0.5,
  );
  const tx = s['enqueue-tx'];
  for (const driver of ['sqlite', 'postgres'] as const) {
    const d = tx?.drivers.find((x) => x.driver === driver);
    const name = driver === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const within = `in tx / plain within a run >= ${TX_TARGET_RATIO}: "no more than", with ${Math.round((1 - TX_TARGET_RATIO) * 100)}% for noise`;
    add(
      `41-tx-single-${driver}`,
      `${name}: enqueue in the application's transaction, ${d?.single.jobs ?? 10_000} singles: ${within}`,
      d?.single.in_tx_over_plain.median,
      (v) => v >= TX_TARGET_RATIO,
    );
    add(
      `41-tx-bulk-${driver}`,
      `${name}: enqueueMany of ${d?.bulk.batch ?? 1_000} in the application's transaction: ${within}`,
      d?.bulk.in_tx_over_plain.median,
      (v) => v >= TX_TARGET_RATIO,
    );
  }
  add('5-p50', 'enqueue-to-start p50 <= 5 ms (default config)', s.latency?.start_latency_ms.p50.median, (v) => v <= 5);
  add(
    '5-p99',
    'enqueue-to-start p99 <= 50 ms (default config)',
    s.latency?.start_latency_ms.p99.median,
    (v) => v <= 50,
  );
  add(
    '6-p50',
    'reclaim after SIGKILL p50 <= 1000 ms (default config)',
    s.recovery?.reclaim_ms.p50.median,
    (v) => v <= 1000,
  );
  const deepest = s.depth?.depths[s.depth.depths.length - 1]?.depth;
  add(
    '7-depth',
    `claim+complete at depth ${deepest ?? '1e6'} within 1.5x of depth 1e3 (ratio >= 0.67)`,
    s.depth?.deepest_over_shallowest.median,
    (v) => v >= 1 / 1.5,
  );
  const hol = s['head-of-line'];
  add(
    '11-max',
    `head-of-line: fast jobs' max started_at − claimed_at <= 50 ms (2 children, ${hol?.slow_ms ?? 3000} ms job every ${hol?.slow_every ?? 250}th)`,
    hol?.fast_wait_ms.max.median,
    (v) => v <= 50,
  );
  add(
    '12-scale',
    `leasehold 4 children >= 2 children (claim_batch ${batch}, ratio within a round)`,
    s.throughput?.four_over_two_children?.median,
    (v) => v >= 1,
  );
  const pg2 = s['pg-throughput']?.results.find((r) => r.processes === 2 && r.claim_batch === batch);
  add(
    '12-pg',
    `PostgreSQL: leasehold 2 children (claim_batch ${batch}) >= 15,000 jobs/s`,
    pg2?.jobs_per_sec.median,
    (v) => v >= 15_000,
  );
  add(
    '13-reads',
    `list and stats at ${s.reads?.jobs ?? '1e6'} jobs: the slowest read <= ${READ_TARGET_MS} ms`,
    slowestMedian(s.reads?.drivers),
    (v) => v <= READ_TARGET_MS,
  );
  const live = s.reads?.live_hour;
  const liveMedians = (metrics: boolean) =>
    live?.drivers.flatMap((d) => d.reads.filter((r) => (r.read === METRICS_READ) === metrics).map((r) => r.ms.median));
  const slowest = (medians: number[] | undefined) =>
    medians === undefined || medians.length === 0 ? undefined : Math.max(...medians);
  const hour = `with ${live?.jobs ?? '360,000'} jobs finished in the last hour`;
  add(
    '32-reads',
    `stats and the overview ${hour}: the slowest median <= ${READ_TARGET_MS} ms`,
    slowest(liveMedians(false)),
    (v) => v <= READ_TARGET_MS,
  );
  add(
    '32-metrics',
    `/metrics ${hour}: the slowest median <= ${METRICS_TARGET_MS} ms`,
    slowest(liveMedians(true)),
    (v) => v <= METRICS_TARGET_MS,
  );
  add(
    '15-dashboard',
    `dashboard page data at ${s.dashboard?.jobs ?? '1e6'} jobs, caches warm: the slowest median <= ${DASHBOARD_TARGET_MS} ms`,
    slowestMedian(s.dashboard?.drivers),
    (v) => v <= DASHBOARD_TARGET_MS,
  );
  add(
    '14-cli',
    `\`leasehold ${CLI_TARGET_COMMANDS.join('`, `')}\` on SQLite: the slowest median wall time <= ${CLI_TARGET_MS} ms`,
    slowestCommand(s.cli),
    (v) => v <= CLI_TARGET_MS,
  );
  add(
    '54-cli',
    `the same, over \`node -e 0\` in the same rounds <= ${CLI_FLOOR_RATIO_TARGET}x`,
    slowestOverFloor(s.cli),
    (v) => v <= CLI_FLOOR_RATIO_TARGET,
  );
  const timely = s.timeliness;
  add(
    '30-job-heartbeat',
    `a running job's heartbeat age (\`stats\`), heartbeat_seconds 0.5: max <= ${JOB_HEARTBEAT_TARGET_MS} ms`,
    timely?.job_heartbeat_age_ms.max,
    (v) => v <= JOB_HEARTBEAT_TARGET_MS,
  );
  add(
    '30-child-heartbeat',
    `children's heartbeat age (\`workers\`): max <= ${CHILD_HEARTBEAT_TARGET_MS} ms`,
    timely?.child_heartbeat_age_ms.max,
    (v) => v <= CHILD_HEARTBEAT_TARGET_MS,
  );
  add(
    '30-kill-late',
    `a hanging job's attempt ends within ${KILL_LATE_TARGET_MS} ms past max_runtime_seconds 1 (kill_grace_seconds 0.5): max`,
    timely?.kill_late_ms.max,
    (v) => v <= KILL_LATE_TARGET_MS,
  );
  add(
    '30-schedule-late',
    `a per-second schedule's occurrence enqueued <= ${SCHEDULE_LATE_TARGET_MS} ms after it came due: max`,
    timely?.schedule_late_ms.max,
    (v) => v <= SCHEDULE_LATE_TARGET_MS,
  );
  for (const target of realWorkTargets(s['real-work'])) add(...target);
  for (const target of writerTargets(s.writer)) add(...target);
  for (const target of tracingTargets(s.tracing)) add(...target);
  for (const target of hostsTargets(s['pg-hosts'])) add(...target);
  add(
    '32-store',
    `the store's own CPU per job (section 18) <= ${STORE_COST_TARGET}x the raw loop with the same rows on section 3b's schema`,
    s['store-cost']?.store_over_raw.median,
    (v) => v <= STORE_COST_TARGET,
  );
  for (const driver of ['sqlite', 'postgres'] as const) {
    const w = s.waiters;
    add(
      `42-waiters-${driver}`,
      `${driver === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: no-op throughput with ${w?.waiters ?? 100} waitFor and an events consumer attached >= ${WAITERS_TARGET_RATIO}x without (within a run)`,
      w?.drivers.find((d) => d.driver === driver)?.attached_over_plain.median,
      (v) => v >= WAITERS_TARGET_RATIO,
    );
  }
  for (const [issue, name, where, jobs] of [
    ['43', 'burst-reads', 'SQLite', 300_000],
    ['53-pg', 'pg-burst-reads', 'PostgreSQL', 100_000],
  ] as const) {
    const burst = s[name];
    add(
      `${issue}-burst-overview`,
      `the dashboard's overview right after ${burst?.jobs ?? jobs} no-op jobs through supervise on ${where}: median <= ${BURST_OVERVIEW_TARGET_MS} ms`,
      burst?.overview_ms.median,
      (v) => v <= BURST_OVERVIEW_TARGET_MS,
    );
    add(
      `${issue}-burst-stats`,
      `${where}: \`stats --json\` right after the same burst <= ${BURST_STATS_TARGET_RATIO}x the same on a nearly empty queue (medians, within the run)`,
      burst?.stats_ratio,
      (v) => v <= BURST_STATS_TARGET_RATIO,
    );
  }
  return targets;
}
