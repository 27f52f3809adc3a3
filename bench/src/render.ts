/** The readable table of a benchmark's JSON document: a few lines for each section that ran, then the targets. */
import { burstReadsLines } from './burst-reads.js';
import { CLI_TARGET_COMMANDS, CLI_TARGET_MS } from './cli.js';
import { DASHBOARD_TARGET_MS } from './dashboard.js';
import { LONG_WAIT_MS } from './head-of-line.js';
import { hostsLines } from './hosts.js';
import { floorLines } from './pg-floor.js';
import { SECTIONS, type BenchReport, type SectionName } from './report.js';
import { STORE_COST_LABELS, STORE_COST_WAYS } from './store-cost.js';
import {
  BY_CHILDREN_AND_BATCH,
  BY_PROCESSES,
  columnsTable,
  figures,
  floorTables,
  fmt,
  latencyHeading,
  latencyTable,
  peerRatios,
  RATES_AND_CPU,
  rawTables,
  readsTable,
  sameLeasehold,
  stat,
  table,
  throughputTable,
} from './table.js';

type Sections = BenchReport['sections'];

/** Each section's lines in the table (a blank line follows each); a new section adds its entry here. */
const RENDER: { [N in SectionName]: (section: NonNullable<Sections[N]>, report: BenchReport) => string[] } = {
  throughput: (t, report) => [
    `1. leasehold throughput on SQLite, no-op jobs, ${t.jobs} queued, supervise + children, full bookkeeping (jobs/s)`,
    '  written: what the supervisor and its children passed to write() (/proc/<pid>/io wchar: WAL frames, checkpoints, a little IPC and log), in 4 KiB pages',
    throughputTable(t.results, BY_CHILDREN_AND_BATCH, report.machine.nproc),
    ...(t.four_over_two_children === undefined
      ? []
      : [
          `  4 children / 2 children (claim_batch ${report.params.claim_batch}), within a round: ${stat(t.four_over_two_children)}`,
        ]),
  ],
  plainjob: (p) => [
    `2. ${p.package}, same workload (jobs/s; CPU ms per 1k jobs of every worker process, as section 1's supervisor + children)`,
    columnsTable(p.results, [...BY_PROCESSES, ...RATES_AND_CPU]),
    ...(p.ratios.length === 0
      ? []
      : [
          figures(
            ['leasehold / plainjob, within a round', 'jobs/s', 'CPU per job'],
            p.ratios.map((r) => [
              `${r.leasehold.processes} children (batch ${r.leasehold.claim_batch}) / ${r.other.processes} processes`,
              r.ratio,
              sameLeasehold(p.cpu_ratios, r)?.ratio,
            ]),
          ),
        ]),
  ],
  bullmq: (b) => [
    `2b. ${b.package}, same workload: ${b.processes} worker process at concurrency ${b.concurrency} on a redis-server of its own (jobs/s; CPU ms per 1k jobs of the worker and redis-server)`,
    columnsTable([b], RATES_AND_CPU),
    ...peerRatios('BullMQ', b.ratios),
  ],
  raw: (raw) => [
    '3. raw ceiling: bare better-sqlite3 claim + fenced complete, no bookkeeping (jobs/s)',
    ...rawTables(raw, 'tx'),
    ...(raw.bookkeeping === undefined ? [] : ['', ...floorTables(raw.bookkeeping)]),
  ],
  enqueue: (e) => [
    '4. enqueue (jobs/s)',
    table(
      ['how', 'jobs', 'jobs/s'],
      [
        [
          '`leasehold enqueue` per job (a process each)',
          String(e.cli_single.jobs),
          `${stat(e.cli_single.jobs_per_sec)} (${stat(e.cli_single.ms_per_job)} ms/job)`,
        ],
        ['queue.enqueue per job (library)', String(e.library_single.jobs), stat(e.library_single.jobs_per_sec)],
        [
          `queue.enqueueMany, chunks of ${e.library_bulk.chunk}`,
          String(e.library_bulk.jobs),
          stat(e.library_bulk.jobs_per_sec),
        ],
        [
          '`leasehold enqueue --file jobs.jsonl` (spawn to exit)',
          String(e.cli_bulk.jobs),
          stat(e.cli_bulk.jobs_per_sec),
        ],
      ],
    ),
  ],
  'enqueue-tx': (e) => [
    `4b. enqueue inside the application's transaction (issue 41) next to today's enqueue, ${e.runs} run(s), the two arms of a pair on fresh queues side by side, taking turns in ${e.blocks} blocks (jobs/s)`,
    table(
      ['driver', 'how', 'jobs', 'plain', "in the application's transaction", 'in tx / plain (within a run)'],
      e.drivers.flatMap((d) => [
        [
          d.driver,
          'enqueue, one at a time',
          String(d.single.jobs),
          stat(d.single.plain.jobs_per_sec),
          stat(d.single.in_tx.jobs_per_sec),
          stat(d.single.in_tx_over_plain),
        ],
        [
          d.driver,
          `enqueueMany of ${d.bulk.batch}`,
          `${d.bulk.batches} × ${d.bulk.batch}`,
          stat(d.bulk.plain.jobs_per_sec),
          stat(d.bulk.in_tx.jobs_per_sec),
          stat(d.bulk.in_tx_over_plain),
        ],
      ]),
    ),
  ],
  latency: (l) => [`5. enqueue-to-start latency on ${latencyHeading(l)}`, latencyTable(l)],
  recovery: (r) => [
    `6. recovery after SIGKILL of a child mid-job, ${r.kills_per_run} kills per run; ${r.config} (ms)`,
    figures(
      ['from the kill to', 'p50', 'max'],
      [
        ['the job claimed again (the figure)', r.reclaim_ms.p50, r.reclaim_ms.max],
        ['the killed attempt closed (taken back)', r.taken_back_ms.p50, r.taken_back_ms.max],
        ['(backoff given to the retry)', r.backoff_ms.p50, r.backoff_ms.max],
      ],
    ),
  ],
  depth: (d) => [
    `7. claim cost against depth (store only, one process): ${d.method}`,
    table(
      ['queued', 'fill time', 'claim+complete jobs/s'],
      d.depths.map((x) => [
        x.depth.toLocaleString('en-US'),
        `${fmt(x.fill_seconds)} s (${fmt(x.fill_jobs_per_sec)} jobs/s)`,
        stat(x.claim_complete_jobs_per_sec),
      ]),
    ),
    `  deepest / shallowest: ${stat(d.deepest_over_shallowest)}`,
    `  sweeper pass: ${d.sweeper.held.toLocaleString('en-US')} held leases, ${d.sweeper.expired} expired, batch ${d.sweeper.batch_size}: ${stat(d.sweeper.pass_ms)} ms (setup ${d.sweeper.setup_seconds} s)`,
  ],
  overhead: (o) => [
    `8. supervisor overhead; ${o.config}`,
    table(
      ['what', 'value'],
      [
        ['supervisor RSS (MiB)', stat(o.rss_mb.supervisor)],
        [
          'idle child RSS (MiB)',
          `${stat(o.rss_mb.child)} (per child: ${o.rss_mb.per_child_median.map(fmt).join(', ')})`,
        ],
        ['  for scale: idle bare `node -e` RSS (MiB)', stat(o.rss_mb.bare_node)],
        ['idle child SIGKILL → replacement ready, by CHILD_READY log (ms)', stat(o.child_replacement_ms.by_log)],
        ['  same, by polling the workers row (ms)', stat(o.child_replacement_ms.by_registry)],
        ['  of which restart-policy delay (ms)', stat(o.child_replacement_ms.restart_delay)],
      ],
    ),
  ],
  'pg-throughput': (t, report) => [
    `9. leasehold throughput on PostgreSQL (${report.params.postgres}), same workload as 1, ${t.jobs} queued (jobs/s)`,
    '  written: the WAL the server generated (pg_current_wal_lsn() moved), in 8 KiB blocks',
    throughputTable(t.results, BY_CHILDREN_AND_BATCH, report.machine.nproc),
    ...(t.raw === undefined
      ? []
      : [
          '  raw ceiling: bare `pg` claim + fenced complete, one statement each, no bookkeeping (jobs/s)',
          ...rawTables(t.raw, 'statement'),
        ]),
  ],
  'graphile-worker': (g) => [
    `9b. ${g.package}, same workload as 9: processes × concurrency ${g.concurrency} (jobs/s; CPU ms per 1k jobs of its processes; the server's, enqueue included)`,
    columnsTable(g.results, [
      ['mode', (r) => r.mode],
      ['processes', (r) => String(r.processes)],
      ...RATES_AND_CPU,
      ['server, enqueue incl.', (r) => stat(r.server_cpu_ms_per_1k_jobs)],
    ]),
    ...peerRatios('graphile-worker', g.ratios, (r) => r.mode),
    ...peerRatios('graphile-worker', g.server_cpu_ratios, (r) => r.mode, 'server CPU per job'),
  ],
  'pg-latency': (l) => [
    '10. enqueue-to-start latency on PostgreSQL, as 5',
    `  with NOTIFY: ${latencyHeading(l.notify)}`,
    latencyTable(l.notify),
    `  without (listen=off): ${latencyHeading(l.poll_only)}`,
    latencyTable(l.poll_only),
  ],
  'head-of-line': (h) => [
    `11. head-of-line: ${h.config}; ${h.jobs} jobs in id order, ${h.fast_ms} ms each but one of ${h.slow_ms} ms at every ${h.slow_every}th place (ms)`,
    figures(
      [`over the ${h.fast_jobs} fast jobs of a run`, 'value'],
      [
        ['started_at − claimed_at, max (the figure)', h.fast_wait_ms.max],
        ['started_at − claimed_at, p99', h.fast_wait_ms.p99],
        ['started_at − claimed_at, p50', h.fast_wait_ms.p50],
        [`fast jobs that waited > ${LONG_WAIT_MS} ms (count)`, h.fast_waits_over_500ms],
        [`wall time, spawn to last finish (floor from the slow jobs alone: ${fmt(h.wall_floor_ms)})`, h.wall_ms],
        ['jobs not SUCCEEDED (count)', h.not_succeeded],
      ],
    ),
  ],
  concurrency: (c, report) => [
    `12. throughput by classes[].concurrency on SQLite, ${c.children} child, claim_batch ${report.params.claim_batch}, supervise + child (jobs/s)`,
    throughputTable(c.results, [
      ['concurrency', (r) => String(r.concurrency)],
      ['job', (r) => (r.job_ms === 0 ? 'no-op' : `${r.job_ms} ms`)],
      ['jobs', (r) => String(r.jobs)],
    ]),
    `  next to: ${c.reference.queue}, concurrency ${c.reference.concurrency}: ${fmt(c.reference.jobs_per_sec)} ${c.reference.note}`,
  ],
  reads: (r) => [
    `13. operator reads with ${fmt(r.jobs)} jobs in the store (98% SUCCEEDED, 1% FAILED, 1% QUEUED, 3 classes, finished over the last 30 days): the store calls of \`leasehold list\` and \`stats\`, ${r.runs} runs each (ms)`,
    readsTable(
      'read',
      r.drivers,
      (read) => [stat(read?.ms)],
      () => '',
    ),
    `  set-up: ${r.drivers.map((d) => `${d.driver} ${fmt(d.setup_seconds)} s`).join(', ')}`,
    `  with ${fmt(r.live_hour.jobs)} jobs finished in the last hour, summed into the stats rollup first (${r.live_hour.drivers.map((d) => `${d.driver} ${fmt(d.roll_up_ms)} ms`).join(', ')}):`,
    readsTable(
      'read',
      r.live_hour.drivers,
      (read) => [stat(read?.ms)],
      () => '',
    ),
  ],
  cli: (c) => [
    `14. \`leasehold --db queue.db <command>\` (one row with --config) on a small SQLite file: wall time of a process, spawn to exit, ${c.runs} runs each (ms; target ${CLI_TARGET_MS} for ${CLI_TARGET_COMMANDS.join(', ')})`,
    table(
      ['command', 'median', 'min', 'max'],
      c.commands.map((x) => [x.command, fmt(x.wall_ms.median), fmt(x.wall_ms.min), fmt(x.wall_ms.max)]),
    ),
  ],
  dashboard: (d) => [
    `15. dashboard page data (src/dashboard/data.ts) with ${fmt(d.jobs)} jobs in the store (finished over 7 days, 1% FAILED, every 250th QUEUED, 32 in flight, ` +
      `${fmt(d.worker_history)} exited children): ${d.runs} runs each after a first call (ms; target ${DASHBOARD_TARGET_MS})`,
    readsTable(
      'page data',
      d.drivers,
      (read) => [stat(read?.ms), read === undefined ? '' : fmt(read.first_ms)],
      (driver) => `${driver} first`,
    ),
    `  set-up: ${d.drivers.map((x) => `${x.driver} ${fmt(x.setup_seconds)} s`).join(', ')}`,
  ],
  timeliness: (t) => [
    `16. timeliness: ${t.config} (ms, median [min–max] over the samples)`,
    table(
      ['measured as', 'samples', 'value'],
      (
        [
          ['running job: now − heartbeat_at, as `leasehold stats`', t.job_heartbeat_age_ms],
          ['children: now − heartbeat_at, as `leasehold workers`', t.child_heartbeat_age_ms],
          ['killed at max_runtime: finished_at − (started_at + max_runtime)', t.kill_late_ms],
          ['schedule: created_at − the occurrence it was due', t.schedule_late_ms],
        ] as const
      ).map(([label, figure]) => [label, String(figure.n), stat(figure)]),
    ),
  ],
  'real-work': (w) => [
    '17. real work on SQLite: jobs that await a timer or burn CPU, supervise + children (jobs/s; CPU ms per job and per 1k jobs)',
    throughputTable(w.results, [
      ['job', (r) => `${r.work} ${r.job_ms} ms`],
      ['concurrency', (r) => String(r.concurrency)],
      ...BY_CHILDREN_AND_BATCH,
      ['jobs', (r) => String(r.jobs)],
      ['CPU ms/job, all', (r) => stat(r.cpu_ms_per_job)],
      ['most running', (r) => stat(r.peak_running)],
    ]),
    `  burning jobs, 2 children / 1 child, within a round: ${stat(w.burn_two_over_one)}`,
    ...(w.await_wide_over_baseline === undefined
      ? []
      : [
          `  awaiting at concurrency 20, this build / ${w.await_wide_over_baseline.baseline}, within a round: ` +
            `jobs/s ${stat(w.await_wide_over_baseline.jobs_per_sec)}, CPU per job ${stat(w.await_wide_over_baseline.cpu_per_job)}`,
        ]),
  ],
  'store-cost': (c) => [
    `18. the store's own CPU on SQLite, one process, no children: ${c.jobs} no-op jobs, ${c.per_tx} a transaction, each with its attempt and timeline rows (CPU µs per job)`,
    table(
      ['way', 'CPU µs/job'],
      STORE_COST_WAYS.map((way) => [STORE_COST_LABELS[way], stat(c.cpu_us_per_job[way])]),
    ),
    `  within a round: the store / the raw loop ${stat(c.store_over_raw)}; the raw loop on leasehold's schema / on 3b's ${stat(c.leasehold_schema_over_raw)}`,
  ],
  waiters: (w) => [
    `19. waiting for outcomes (issue 42): ${w.jobs} no-op jobs through supervise, without and with ${w.waiters} waitFor and an events consumer attached, ${w.runs} run(s), the arms taking turns (jobs/s; ms from finished_at to the wait's answer)`,
    table(
      [
        'driver',
        'without',
        'attached',
        'attached / without (within a run)',
        'waitFor p50',
        'waitFor p99',
        'outcomes read',
      ],
      w.drivers.map((d) => [
        d.driver,
        stat(d.plain.jobs_per_sec),
        stat(d.attached.jobs_per_sec),
        stat(d.attached_over_plain),
        stat(d.wait_latency_ms.p50),
        stat(d.wait_latency_ms.p99),
        stat(d.events_read),
      ]),
    ),
  ],
  'burst-reads': burstReadsLines,
  writer: (t) => [
    `21. children on one SQLite file, one writer (issues 43, 52): ${t.method} (jobs/s; CPU ms per 1k jobs; ms a child's timer fired late while jobs ran)`,
    table(
      ['build', 'children', 'classes', 'jobs/s (warm)', 'CPU ms/1k jobs', 'timer late p50', 'p99', 'max'],
      t.results.map((r) => [
        r.arm,
        String(r.children),
        String(r.classes),
        stat(r.jobs_per_sec),
        stat(r.cpu_ms_per_1k_jobs),
        stat(r.timer_late_ms.p50),
        stat(r.timer_late_ms.p99),
        stat(r.timer_late_ms.max),
      ]),
    ),
    `  plainjob, 1 process: ${stat(t.plainjob.jobs_per_sec)} jobs/s, ${stat(t.plainjob.cpu_ms_per_1k_jobs)} CPU ms/1k jobs`,
    ...t.scaling.map(
      (s) =>
        `  ${s.arm}, within a round: jobs/s 2 children / 1 ${stat(s.two_over_one)}, 4 / 2 ${stat(s.four_over_two)}, ` +
        `8 / 4 ${stat(s.eight_over_four)}, 8 classes / 1 class ${stat(s.classes_over_one_class)}; ` +
        `CPU per job 8 children / 1 ${stat(s.cpu_eight_over_one)}, 1 child / plainjob ${stat(s.cpu_one_over_plainjob)}`,
    ),
    ...(t.cpu_over_baseline ?? []).map(
      (c) =>
        `  CPU per job, this build / the baseline, ${c.children} child(ren), ${c.classes} class(es), within a round: ${stat(c.ratio)}`,
    ),
  ],
  'pg-hosts': hostsLines,
  'pg-floor': floorLines,
  'pg-burst-reads': burstReadsLines,
  'pg-statements': (p) => [
    `23. where the PostgreSQL server's time goes (issue 53): ${p.method}; pg_stat_statements.track = ${p.track}`,
    `  top-level statements: ${fmt(p.toplevel_exec_us_per_job)} µs of execution and ${fmt(p.toplevel_wal_bytes_per_job)} WAL bytes a job; ` +
      `the server's CPU over the drain: ${p.server_cpu_ms_per_1k === undefined ? 'n/a' : fmt(p.server_cpu_ms_per_1k)} ms per 1k jobs`,
    table(
      ['µs/job', 'share', 'calls/job', 'rows/job', 'mean ms', 'WAL B/job', 'level', 'statement'],
      p.statements.map((s) => [
        fmt(s.exec_us_per_job),
        `${(s.share_of_toplevel * 100).toFixed(1)}%`,
        fmt(s.calls_per_job),
        fmt(s.rows_per_job),
        fmt(s.mean_exec_ms),
        fmt(s.wal_bytes_per_job),
        s.toplevel ? 'top' : 'nested',
        s.query,
      ]),
    ),
  ],
  tracing: (t) => [
    `22. what tracing costs (issue 44): ${t.jobs} no-op jobs, 1 child, claim_batch 64, tracing off, on (no-op exporter), context (no SDK)`,
    table(
      ['arm', 'jobs/s (steady)', 'CPU ms / 1k jobs'],
      t.results.map((r) => [r.arm, stat(r.jobs_per_sec), stat(r.cpu_ms_per_1k_jobs)]),
    ),
    `  within a round: on / off ${t.on_over_off ? stat(t.on_over_off) : 'n/a'}; off / baseline ${t.off_over_baseline ? stat(t.off_over_baseline) : 'n/a'}; on / baseline ${t.on_over_baseline ? stat(t.on_over_baseline) : 'n/a'}`,
  ],
};

export function renderTable(report: BenchReport): string {
  const m = report.machine;
  const out: string[] = [
    `leasehold benchmark (${report.quick ? 'QUICK smoke run: tiny sizes, not a measurement' : 'full run'}), ${report.started_at}, ${report.duration_seconds} s`,
    `machine: ${m.nproc} × ${m.cpu_model}, ${(m.mem_total_mb / 1024).toFixed(1)} GiB, ${m.os}, node ${m.node}, SQLite ${m.sqlite} (better-sqlite3 ${m.better_sqlite3})`,
    `load: loadavg ${m.loadavg_start.join(' ')} at start, ${m.loadavg_end.join(' ')} at end; ${m.cpu_busy_percent_before}% of all cores busy just before`,
    `source: commit ${report.source.commit}${report.source.dirty_files > 0 ? ` + ${report.source.dirty_files} uncommitted file(s) in src/, supervisor/, child/` : ''}`,
    `figures: median [min–max] over ${report.params.runs} run(s); ratios taken within each round`,
    '',
  ];
  for (const name of SECTIONS) {
    const section = report.sections[name];
    if (section !== undefined)
      out.push(...(RENDER[name] as (section: unknown, report: BenchReport) => string[])(section, report), '');
  }
  if (report.targets.length > 0) {
    out.push('targets (issues 1, 5-7, 11-15, 30, 32, 41-44 and 52-54)');
    out.push(
      table(
        ['target', 'value', 'met'],
        report.targets.map((t) => [
          t.target,
          t.value === null ? 'n/a' : fmt(t.value),
          t.met === null ? '–' : t.met ? 'yes' : 'NO',
        ]),
      ),
    );
  }
  for (const e of report.errors) out.push(`ERROR in ${e.section}: ${e.error}`);
  return `${out.join('\n')}\n`;
}
