/** The JSON document's shape and the readable table (targets.ts checks the targets against the document). */
import type { Stat } from './common.js';
import type { ComparisonSections, PgComparisonSections } from './compare.js';
import type { PeerRatio, PeerRow } from './peers.js';
import type { BookkeepingFloor, RawSection, Ratio } from './rounds.js';
import { CLI_TARGET_COMMANDS, CLI_TARGET_MS, type CliSection } from './cli.js';
import type { ConcurrencyRow, ConcurrencySection } from './concurrency.js';
import type { DepthSection } from './depth.js';
import type { EnqueueSection } from './enqueue.js';
import { LONG_WAIT_MS, type HeadOfLineSection } from './head-of-line.js';
import type { LatencySection, LatencyStats, PgLatencySection } from './latency.js';
import type { MachineInfo } from './machine.js';
import type { OverheadSection } from './overhead.js';
import type { ThroughputRow } from './throughput.js';
import type { RealWorkSection } from './real-work.js';
import { STORE_COST_LABELS, STORE_COST_WAYS, type StoreCostSection } from './store-cost.js';
import type { RecoverySection } from './recovery.js';
import type { ReadsSection } from './reads.js';
import { DASHBOARD_TARGET_MS, type DashboardSection } from './dashboard.js';
import type { TimelinessSection } from './timeliness.js';

export const SECTIONS = [
  'throughput',
  'plainjob',
  'raw',
  'bullmq',
  'enqueue',
  'latency',
  'recovery',
  'depth',
  'overhead',
  'pg-throughput',
  'graphile-worker',
  'pg-latency',
  'head-of-line',
  'concurrency',
  'reads',
  'cli',
  'dashboard',
  'timeliness',
  'real-work',
  'store-cost',
] as const;
export type SectionName = (typeof SECTIONS)[number];

/** One target: its id, what it says, the value measured (null: not measured in this run), and whether it was met. */
export interface Target {
  id: string;
  target: string;
  value: number | null;
  met: boolean | null;
}

export interface BenchReport {
  bench: 'leasehold';
  command: string;
  quick: boolean;
  started_at: string;
  duration_seconds: number;
  machine: MachineInfo & { loadavg_end: number[] };
  /** The commit measured, and how many files under src/, supervisor/ and child/ differed from it. */
  source: { commit: string; dirty_files: number };
  /** `postgres`: the server of the pg-* sections (the URL without its password), when they ran. */
  params: { runs: number; jobs: number; claim_batch: number; processes: number[]; postgres: string | null };
  sections: ComparisonSections &
    PgComparisonSections & {
      enqueue?: EnqueueSection;
      latency?: LatencySection;
      recovery?: RecoverySection;
      depth?: DepthSection;
      overhead?: OverheadSection;
      'pg-latency'?: PgLatencySection;
      'head-of-line'?: HeadOfLineSection;
      concurrency?: ConcurrencySection;
      reads?: ReadsSection;
      cli?: CliSection;
      dashboard?: DashboardSection;
      timeliness?: TimelinessSection;
      'real-work'?: RealWorkSection;
      'store-cost'?: StoreCostSection;
    };
  /** Loadavg (1 min) when each section began: how noisy its neighbours were. */
  section_loadavg: Partial<Record<SectionName, number>>;
  targets: Target[];
  errors: { section: SectionName; error: string }[];
}

type Sections = BenchReport['sections'];

// ---- the table

const fmt = (value: number): string => {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
};

export function stat(s: Stat | undefined): string {
  if (s === undefined) return 'n/a';
  return s.n > 1 ? `${fmt(s.median)} [${fmt(s.min)}–${fmt(s.max)}]` : fmt(s.median);
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A table whose cells past the first are figures. */
function figures(header: string[], rows: [string, ...(Stat | undefined)[]][]): string {
  return table(
    header,
    rows.map(([label, ...cells]) => [label, ...cells.map(stat)]),
  );
}

/** A table of `rows`, one column per header and cell. */
function columnsTable<R>(rows: R[], columns: Lead<R>): string {
  return table(
    columns.map(([header]) => header),
    rows.map((row) => columns.map(([, cell]) => cell(row))),
  );
}

/** Runs by processes: the steady rate and the rate from spawn; `lead` tells a row apart. */
function ratesTable<R extends { jobs_per_sec: Stat; jobs_per_sec_from_start: Stat }>(
  results: R[],
  lead: Lead<R>,
): string {
  return columnsTable(results, [
    ...lead,
    ['jobs/s (steady)', (r) => stat(r.jobs_per_sec)],
    ['jobs/s (from spawn)', (r) => stat(r.jobs_per_sec_from_start)],
  ]);
}

const BY_PROCESSES: Lead<{ processes: number }> = [['processes', (r) => String(r.processes)]];

const RATES_AND_CPU: Lead<PeerRow> = [
  ['jobs/s (steady)', (r) => stat(r.jobs_per_sec)],
  ['jobs/s (from spawn)', (r) => stat(r.jobs_per_sec_from_start)],
  ['CPU ms per 1k jobs', (r) => stat(r.cpu_ms_per_1k_jobs)],
];

/** The ratio in `ratios` of the same leasehold row as `row`. */
const sameLeasehold = (ratios: Ratio[], row: Ratio) =>
  ratios.find(
    (r) => r.leasehold.processes === row.leasehold.processes && r.leasehold.claim_batch === row.leasehold.claim_batch,
  );

/** Leasehold's jobs/s over a peer's, within a round; `what` names the peer's row. */
function peerRatios<R extends PeerRatio>(peer: string, ratios: R[], what: (r: R) => string = () => peer): string[] {
  if (ratios.length === 0) return [];
  return [
    figures(
      [`leasehold / ${peer}, within a round`, 'jobs/s'],
      ratios.map((r) => [`${r.leasehold.processes} children (batch ${r.leasehold.claim_batch}) / ${what(r)}`, r.ratio]),
    ),
  ];
}

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
    `9b. ${g.package}, same workload as 9: ${g.processes} processes × concurrency ${g.concurrency} (jobs/s; CPU ms per 1k jobs of its processes, not the server's)`,
    columnsTable(g.results, [['mode', (r) => r.mode], ...RATES_AND_CPU]),
    ...peerRatios('graphile-worker', g.ratios, (r) => r.mode),
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
  ],
  'store-cost': (c) => [
    `18. the store's own CPU on SQLite, one process, no children: ${c.jobs} no-op jobs, ${c.per_tx} a transaction, each with its attempt and timeline rows (CPU µs per job)`,
    table(
      ['way', 'CPU µs/job'],
      STORE_COST_WAYS.map((way) => [STORE_COST_LABELS[way], stat(c.cpu_us_per_job[way])]),
    ),
    `  within a round: the store / the raw loop ${stat(c.store_over_raw)}; the raw loop on leasehold's schema / on 3b's ${stat(c.leasehold_schema_over_raw)}`,
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
    out.push('targets (issues 1, 5-7, 11-15, 30 and 32)');
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

/**
 * One row per read named by the first driver, and for each driver the
 * cells `cells` makes of its read (columns: the driver, then `extra`'s).
 * A read timed cold is labelled so: it is not in the target.
 */
function readsTable<R extends { read: string; cold?: boolean }>(
  header: string,
  drivers: { driver: string; reads: R[] }[],
  cells: (read: R | undefined) => string[],
  extra: (driver: string) => string,
): string {
  const columns = drivers.flatMap((d) => [d.driver, extra(d.driver)].filter((c) => c !== ''));
  const first = drivers[0]?.reads ?? [];
  const label = (read: R) => (read.cold === true ? `${read.read} (cold: not in the target)` : read.read);
  return table(
    [header, ...columns],
    first.map((read) => [label(read), ...drivers.flatMap((d) => cells(d.reads.find((x) => x.read === read.read)))]),
  );
}

/** The raw loop's runs, and leasehold's ratios to it; `per`: what one batch of the loop is (a transaction, a statement). */
function rawTables(raw: RawSection, per: string): string[] {
  const runs = ratesTable(raw.results, [...BY_PROCESSES, [`jobs/${per}`, (r) => String(r.per_tx)]]);
  if (raw.ratios.length === 0) return [runs];
  const label = (r: Ratio) =>
    `${r.leasehold.processes} children (batch ${r.leasehold.claim_batch}) / raw ${r.other.processes} proc, ${r.other.per_tx}/${per}`;
  return [
    runs,
    figures(
      ['leasehold / raw', 'ratio'],
      raw.ratios.map((r) => [label(r), r.ratio]),
    ),
  ];
}

/** The raw loop with the data model's bookkeeping: its runs, leasehold over it, it over plainjob. */
function floorTables(floor: BookkeepingFloor): string[] {
  return [
    `3b. the raw loop with the data model's bookkeeping (an attempt row, two timeline rows a job), ${floor.per_tx} jobs a transaction (jobs/s)`,
    ratesTable(floor.results, BY_PROCESSES),
    figures(
      ['within a round', 'ratio'],
      [
        ...floor.leasehold_over_floor.map((r): [string, Stat] => [
          `leasehold ${r.leasehold.processes} children (batch ${r.leasehold.claim_batch}) / this loop, ${r.other.processes} processes`,
          r.ratio,
        ]),
        ...floor.floor_over_plainjob.map((r): [string, Stat] => [
          `this loop, ${r.processes} processes / plainjob ${r.processes} processes`,
          r.ratio,
        ]),
      ],
    ),
  ];
}

/** The columns that tell a row's configuration apart: header and cell. */
type Lead<R> = [string, (row: R) => string][];

const BY_CHILDREN_AND_BATCH: Lead<ThroughputRow> = [
  ['children', (r) => String(r.processes)],
  ['claim_batch', (r) => String(r.claim_batch)],
];

/**
 * What `cores` could drain at a row's CPU per job (supervisor, children and
 * the database server, their medians) if they did nothing else: a bound no
 * scheduling, lock hand-over or batching can pass without less work per job.
 */
function cpuCeiling(cpu: ThroughputRow['cpu_ms_per_1k_jobs'], cores: number): number {
  const msPer1k = cpu.supervisor.median + cpu.children.median + (cpu.server?.median ?? 0);
  return (cores * 1_000_000) / msPer1k;
}

/** `cores`: also show each row's CPU ceiling on that many cores (the throughput sections). */
function throughputTable<R extends ThroughputRow | ConcurrencyRow>(
  results: R[],
  lead: Lead<R> = BY_CHILDREN_AND_BATCH,
  cores?: number,
): string {
  const server: Lead<R> = results.some((r) => r.cpu_ms_per_1k_jobs.server !== undefined)
    ? [['database server', (r) => stat(r.cpu_ms_per_1k_jobs.server)]]
    : [];
  const ceiling: Lead<R> =
    cores === undefined
      ? []
      : [[`CPU ceiling, ${cores} cores (jobs/s)`, (r) => fmt(cpuCeiling(r.cpu_ms_per_1k_jobs, cores))]];
  return columnsTable(results, [
    ...lead,
    ['jobs/s (steady)', (r) => stat(r.jobs_per_sec)],
    ['jobs/s (from spawn)', (r) => stat(r.jobs_per_sec_from_start)],
    ['events/job', (r) => fmt(r.events_per_job)],
    ['KiB written/job', (r) => stat(r.written_kib_per_job)],
    ['pages/job', (r) => stat(r.pages_written_per_job)],
    ['CPU ms per 1k jobs: supervisor', (r) => stat(r.cpu_ms_per_1k_jobs.supervisor)],
    ['children', (r) => stat(r.cpu_ms_per_1k_jobs.children)],
    ...server,
    ...ceiling,
  ]);
}

function latencyHeading(l: LatencySection): string {
  return `${l.config}; ${l.jobs_per_run} jobs per run ${l.gap_ms[0]}-${l.gap_ms[1]} ms apart (ms)`;
}

function latencyTable(l: LatencySection): string {
  const row = (name: string, x: LatencyStats): [string, ...Stat[]] => [name, x.p50, x.p95, x.p99, x.max];
  const rows = figures(
    ['measured as', 'p50', 'p95', 'p99', 'max'],
    [
      row('started_at − created_at', l.start_latency_ms),
      row('claimed_at − created_at', l.claim_latency_ms),
      row('STARTED event ts − created_at', l.started_event_latency_ms),
    ],
  );
  const idle =
    `  idle CPU, supervisor + ${l.idle_cpu.children} children, ${l.idle_cpu.window_seconds} s windows: ${stat(l.idle_cpu.cpu_seconds_per_minute)} CPU s/min ` +
    `(supervisor ${stat(l.idle_cpu.supervisor_cpu_seconds_per_minute)}, children ${stat(l.idle_cpu.children_cpu_seconds_per_minute)})`;
  return `${rows}\n${idle}`;
}
