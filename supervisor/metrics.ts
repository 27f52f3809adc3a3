/**
 * The supervisor's Prometheus metrics, in a registry of their own. Counters
 * are fed by the parts that learn of things (class pools, sweeper, retention)
 * through the MetricsSink interface; gauges about the data are read from the
 * store when /metrics is scraped.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry, type GaugeConfiguration } from 'prom-client';
import { DB_FAULT_KINDS, dbFaultOf, type DbFaultKind } from '../src/store/faults.js';
import type { MetricsSink, RecoverySource } from './metrics-sink.js';
import type { JobOutcome, SuccessTally } from '../src/ipc/protocol.js';
import { DURATION_BUCKETS, PEAK_RSS_BUCKETS } from '../src/ipc/buckets.js';
import { BucketHistogram } from './bucket-histogram.js';
import { clockOffsetMs } from './clock-watch.js';
import type { ClassConfig } from '../src/config/schema.js';
import { ageSeconds } from '../src/reports/queue-age.js';
import { pausedClasses, rateLimitsByClass, rateLimitWaiting } from '../src/queue/class-controls.js';
import {
  JOB_STATUSES,
  type AttemptCost,
  type RateWindow,
  type RecoveredJob,
  type SupervisorStore,
  type TerminalStatus,
} from '../src/store/types.js';

export interface SupervisorMetricsOptions {
  store: SupervisorStore;
  supervisorId: string;
  /** The classes of the config in force (a reload changes them): their job gauges exist (at 0) before any job does, and their rate limits are read. */
  classes: () => readonly ClassConfig[];
}

export class SupervisorMetrics implements MetricsSink {
  readonly registry = new Registry();
  private readonly claimed: Counter<'class'>;
  private readonly succeeded: Counter<'class'>;
  private readonly failed: Counter<'class'>;
  private readonly deadLettered: Counter<'class'>;
  private readonly leasesLost: Counter<'class'>;
  private readonly recovered: Counter<'class' | 'code' | 'source'>;
  private readonly leaseRecoveries: Counter<'class'>;
  private readonly duration: BucketHistogram<'class' | 'outcome'>;
  private readonly cpuSeconds: Counter<'class'>;
  private readonly peakRss: BucketHistogram<'class'>;
  private readonly restarts: Counter<'class'>;
  private readonly pruned: Counter<'status'>;
  private readonly dbErrors: Counter<'kind'>;

  constructor(options: SupervisorMetricsOptions) {
    const { store, supervisorId } = options;
    const classes = () => options.classes().map((c) => c.name);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    databaseGauge(
      {
        name: 'leasehold_jobs',
        help: 'Jobs in the database by class and status (read at scrape time)',
        labelNames: ['class', 'status'] as const,
        registers,
      },
      async (gauge) => {
        for (const name of classes()) for (const status of JOB_STATUSES) gauge.set({ class: name, status }, 0);
        for (const row of await store.statsCounts()) gauge.set({ class: row.class, status: row.status }, row.count);
      },
    );
    databaseGauge(
      {
        name: 'leasehold_zombie_writes_rejected',
        help: 'ZOMBIE_WRITE_REJECTED events in the database: writes by a worker whose lease was gone (retention removes them with their jobs)',
        registers,
      },
      async (gauge) => gauge.set(await store.statsZombieWrites()),
    );
    databaseGauge(
      {
        name: 'leasehold_class_paused',
        help: '1 while a class is paused (`leasehold pause`): it claims nothing on any host',
        labelNames: ['class'] as const,
        registers,
      },
      async (gauge) => {
        for (const name of classes()) gauge.set({ class: name }, 0);
        for (const row of await pausedClasses(store)) gauge.set({ class: row.class }, 1);
      },
    );
    databaseGauge(
      {
        name: 'leasehold_queue_oldest_age_seconds',
        help: "How long each class's oldest due job (QUEUED, run_at passed) has waited; 0 when none is due",
        labelNames: ['class'] as const,
        registers,
      },
      async (gauge) => {
        const now = store.clock.now();
        for (const name of classes()) gauge.set({ class: name }, 0);
        for (const row of await store.statsOldestDue({ now }))
          gauge.set({ class: row.class }, ageSeconds(now, row.run_at));
      },
    );
    new Gauge({
      name: 'leasehold_clock_offset_seconds',
      help: "This host's wall clock minus the store's time (PostgreSQL: the server's clock; SQLite: the file's timeline)",
      registers,
      collect() {
        this.set(clockOffsetMs(store) / 1000);
      },
    });
    // A scrape collects every gauge at once: the two rate-limit gauges join one read of the windows, where reads
    // of their own could fall on both sides of a claim (a window full, and no start in it).
    let windowsRead: Promise<[string, RateWindow][]> | undefined;
    const windows = () =>
      (windowsRead ??= Promise.all(
        [...rateLimitsByClass(options.classes())].map(async ([jobClass, rateLimit]): Promise<[string, RateWindow]> => [
          jobClass,
          await store.classRateWindow({ class: jobClass, rateLimit }),
        ]),
      ).finally(() => (windowsRead = undefined)));
    const rateLimitGauge = (name: string, help: string, read: (window: RateWindow) => number) =>
      databaseGauge({ name, help, labelNames: ['class'] as const, registers }, async (gauge) => {
        for (const [jobClass, window] of await windows()) gauge.set({ class: jobClass }, read(window));
      });
    rateLimitGauge(
      'leasehold_class_rate_window_starts',
      'Starts (claims) of a rate-limited class in its current window, on every host',
      (window) => window.started,
    );
    rateLimitGauge(
      'leasehold_class_rate_limited',
      '1 while a rate-limited class waits: jobs are due and its window is full',
      (window) => (rateLimitWaiting(window) ? 1 : 0),
    );
    // Children's CPU and memory as the health watch last recorded them in the registry.
    const children = async () =>
      (await store.workerList({ includeExited: false, limit: 10_000 })).filter(
        (row) => row.kind === 'child' && row.supervisor_id === supervisorId,
      );
    const childGauges = [
      ['leasehold_child_cpu_percent', "A child's CPU use, percent of one core (last sample)", 'cpu_percent'],
      ['leasehold_child_memory_bytes', "A child's resident memory in bytes (last sample)", 'memory_bytes'],
    ] as const;
    for (const [name, help, field] of childGauges) {
      databaseGauge({ name, help, labelNames: ['class', 'pid'] as const, registers }, async (gauge) => {
        for (const row of await children()) {
          const sample = row[field];
          if (sample !== null) gauge.set({ class: row.class ?? '', pid: String(row.pid) }, sample);
        }
      });
    }

    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
      new Counter<L>({ name, help, labelNames, registers });
    this.claimed = counter('leasehold_jobs_claimed_total', "Jobs claimed and started by this supervisor's children", [
      'class',
    ]);
    this.succeeded = counter('leasehold_jobs_succeeded_total', 'Jobs that succeeded', ['class']);
    this.failed = counter('leasehold_jobs_failed_total', 'Attempts that failed (retried or dead-lettered)', ['class']);
    this.deadLettered = counter(
      'leasehold_jobs_dead_lettered_total',
      'Jobs that failed for good (FAILED: no retries left or not retryable)',
      ['class'],
    );
    this.leasesLost = counter(
      'leasehold_leases_lost_total',
      'Jobs whose worker found its lease gone (its writes were rejected)',
      ['class'],
    );
    this.recovered = counter(
      'leasehold_jobs_recovered_total',
      'Jobs taken back from a dead, killed or silent worker, or handed back at shutdown',
      ['class', 'code', 'source'],
    );
    this.leaseRecoveries = counter('leasehold_lease_recoveries_total', 'Expired leases the sweeper took back', [
      'class',
    ]);
    this.restarts = counter('leasehold_child_restarts_total', 'Children replaced after they exited', ['class']);
    this.pruned = counter('leasehold_jobs_pruned_total', 'Finished jobs deleted by retention', ['status']);
    this.dbErrors = counter(
      'leasehold_db_errors_total',
      'Database operations that failed because the database was away (connection), locked, or out of disk, by this supervisor and its children',
      ['kind'],
    );
    // Histograms of our own (bucket-histogram.ts): a child's successes come counted into their buckets.
    this.duration = new BucketHistogram(
      'leasehold_job_duration_seconds',
      "Time from start to outcome of the jobs this supervisor's children ran",
      ['class', 'outcome'] as const,
      DURATION_BUCKETS,
      registers,
    );
    this.cpuSeconds = counter(
      'leasehold_job_cpu_seconds_total',
      "CPU time (user + system) of this supervisor's children while they ran jobs, attributed to each job's class",
      ['class'],
    );
    // A histogram, not a gauge of the last minute's maximum: each attempt is one observation, kept between scrapes,
    // so any window's distribution, quantiles and count over a size come from the query (as for request sizes).
    this.peakRss = new BucketHistogram(
      'leasehold_job_peak_rss_bytes',
      'The highest resident memory of a child while it ran one job (its whole process: shared with the jobs beside it when concurrency > 1)',
      ['class'] as const,
      PEAK_RSS_BUCKETS,
      registers,
    );
    // Series at zero from the start, so rates work from the first scrape.
    for (const name of classes()) {
      for (const metric of [
        this.claimed,
        this.succeeded,
        this.failed,
        this.deadLettered,
        this.leasesLost,
        this.leaseRecoveries,
        this.restarts,
        this.cpuSeconds,
      ])
        metric.inc({ class: name }, 0);
    }
    for (const kind of DB_FAULT_KINDS) this.dbErrors.inc({ kind }, 0);
  }

  jobsStarted(jobClass: string, count: number): void {
    this.claimed.inc({ class: jobClass }, count);
  }

  jobFinished(jobClass: string, outcome: JobOutcome, durationMs: number): void {
    const labels = { class: jobClass };
    if (outcome === 'SUCCEEDED') this.succeeded.inc(labels);
    if (outcome === 'QUEUED' || outcome === 'FAILED') this.failed.inc(labels);
    if (outcome === 'FAILED') this.deadLettered.inc(labels);
    if (outcome === 'LEASE_LOST') this.leasesLost.inc(labels);
    this.duration.observe({ class: jobClass, outcome }, durationMs / 1000);
  }

  jobsSucceeded(jobClass: string, tally: SuccessTally): void {
    const labels = { class: jobClass };
    this.succeeded.inc(labels, tally.count);
    this.duration.add({ class: jobClass, outcome: 'SUCCEEDED' }, tally.durationSeconds);
    this.cpuSeconds.inc(labels, tally.cpuMs / 1000);
    this.peakRss.add(labels, tally.peakRssBytes);
  }

  jobCost(jobClass: string, cost: AttemptCost): void {
    this.cpuSeconds.inc({ class: jobClass }, cost.cpuMs / 1000);
    this.peakRss.observe({ class: jobClass }, cost.peakRssBytes);
  }

  jobsRecovered(jobs: readonly RecoveredJob[], code: string, source: RecoverySource): void {
    for (const job of jobs) {
      this.recovered.inc({ class: job.class, code, source });
      if (source === 'sweeper') this.leaseRecoveries.inc({ class: job.class });
      if (job.status === 'FAILED') this.deadLettered.inc({ class: job.class });
    }
  }

  childRestarted(jobClass: string): void {
    this.restarts.inc({ class: jobClass });
  }

  jobsPruned(status: TerminalStatus, count: number): void {
    this.pruned.inc({ status }, count);
  }

  dbError(kind: DbFaultKind): void {
    this.dbErrors.inc({ kind });
  }
}

/**
 * A gauge read from the database at scrape time. With the database away it
 * is left out of the scrape, so the counters (leasehold_db_errors_total
 * first) still answer.
 */
function databaseGauge<L extends string>(
  configuration: Omit<GaugeConfiguration<L>, 'collect'>,
  read: (gauge: Gauge<L>) => Promise<void>,
): Gauge<L> {
  return new Gauge<L>({
    ...configuration,
    async collect() {
      this.reset();
      try {
        await read(this);
      } catch (error) {
        if (dbFaultOf(error) === undefined) throw error;
        this.reset();
      }
    },
  });
}
