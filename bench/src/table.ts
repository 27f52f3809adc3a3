/** The readable table's parts: figures, tables of rows, and the tables several sections share (render.ts lays them out). */
import type { Stat } from './common.js';
import type { ConcurrencyRow } from './concurrency.js';
import type { LatencySection, LatencyStats } from './latency.js';
import type { PeerRatio, PeerRow } from './peers.js';
import type { BookkeepingFloor, RawSection, Ratio } from './rounds.js';
import type { ThroughputRow } from './throughput.js';

export const fmt = (value: number): string => {
  if (!Number.isFinite(value)) return 'n/a';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
};

export function stat(s: Stat | undefined): string {
  if (s === undefined) return 'n/a';
  return s.n > 1 ? `${fmt(s.median)} [${fmt(s.min)}–${fmt(s.max)}]` : fmt(s.median);
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** A table whose cells past the first are figures. */
export function figures(header: string[], rows: [string, ...(Stat | undefined)[]][]): string {
  return table(
    header,
    rows.map(([label, ...cells]) => [label, ...cells.map(stat)]),
  );
}

/** A table of `rows`, one column per header and cell. */
export function columnsTable<R>(rows: R[], columns: Lead<R>): string {
  return table(
    columns.map(([header]) => header),
    rows.map((row) => columns.map(([, cell]) => cell(row))),
  );
}

/** Runs by processes: the steady rate and the rate from spawn; `lead` tells a row apart. */
export function ratesTable<R extends { jobs_per_sec: Stat; jobs_per_sec_from_start: Stat }>(
  results: R[],
  lead: Lead<R>,
): string {
  return columnsTable(results, [
    ...lead,
    ['jobs/s (steady)', (r) => stat(r.jobs_per_sec)],
    ['jobs/s (from spawn)', (r) => stat(r.jobs_per_sec_from_start)],
  ]);
}

export const BY_PROCESSES: Lead<{ processes: number }> = [['processes', (r) => String(r.processes)]];

export const RATES_AND_CPU: Lead<PeerRow> = [
  ['jobs/s (steady)', (r) => stat(r.jobs_per_sec)],
  ['jobs/s (from spawn)', (r) => stat(r.jobs_per_sec_from_start)],
  ['CPU ms per 1k jobs', (r) => stat(r.cpu_ms_per_1k_jobs)],
];

/** The ratio in `ratios` of the same leasehold row as `row`. */
export const sameLeasehold = (ratios: Ratio[], row: Ratio) =>
  ratios.find(
    (r) => r.leasehold.processes === row.leasehold.processes && r.leasehold.claim_batch === row.leasehold.claim_batch,
  );

/** Leasehold's jobs/s over a peer's, within a round; `what` names the peer's row. */
export function peerRatios<R extends PeerRatio>(
  peer: string,
  ratios: R[],
  what: (r: R) => string = () => peer,
  figure = 'jobs/s',
): string[] {
  if (ratios.length === 0) return [];
  return [
    figures(
      [`leasehold / ${peer}, within a round`, figure],
      ratios.map((r) => [`${r.leasehold.processes} children (batch ${r.leasehold.claim_batch}) / ${what(r)}`, r.ratio]),
    ),
  ];
}

/**
 * One row per read named by the first driver, and for each driver the
 * cells `cells` makes of its read (columns: the driver, then `extra`'s).
 * A read timed cold is labelled so: it is not in the target.
 */
export function readsTable<R extends { read: string; cold?: boolean }>(
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
export function rawTables(raw: RawSection, per: string): string[] {
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
export function floorTables(floor: BookkeepingFloor): string[] {
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
export type Lead<R> = [string, (row: R) => string][];

export const BY_CHILDREN_AND_BATCH: Lead<ThroughputRow> = [
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
export function throughputTable<R extends ThroughputRow | ConcurrencyRow>(
  results: R[],
  lead: Lead<R> = BY_CHILDREN_AND_BATCH,
  cores?: number,
): string {
  const server: Lead<R> = results.some((r) => r.cpu_ms_per_1k_jobs.server !== undefined)
    ? [['database server', (r) => stat(r.cpu_ms_per_1k_jobs.server)]]
    : [];
  const serverWhole: Lead<R> = results.some((r) => r.cpu_ms_per_1k_jobs.server_whole !== undefined)
    ? [['server, enqueue incl.', (r) => stat(r.cpu_ms_per_1k_jobs.server_whole)]]
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
    ...serverWhole,
    ...ceiling,
  ]);
}

export function latencyHeading(l: LatencySection): string {
  return `${l.config}; ${l.jobs_per_run} jobs per run ${l.gap_ms[0]}-${l.gap_ms[1]} ms apart (ms)`;
}

export function latencyTable(l: LatencySection): string {
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
