import type { Clock } from '../clock.js';
import type { LeaseholdConfig } from '../config/schema.js';
import { openStore } from '../store/open.js';
import type {
  AttemptRow,
  EventRow,
  InsertedJob,
  JobLogRow,
  JobListFilter,
  JobRow,
  NewJob,
  MaintenanceStore,
  OperatorStore,
  ProducerStore,
  Store,
} from '../store/types.js';
import { statsReport, type StatsReport, type StatsRequest } from '../reports/stats.js';
import type { SchedulerStore } from '../store/schedules.js';
import {
  cancelJob,
  pauseClass,
  resumeClass,
  retryFailed,
  retryJob,
  type CancelResult,
  type PauseResult,
  type ResumeResult,
  type RetryFailedFilter,
  type RetryResult,
} from './controls.js';
import { DEFAULT_ENQUEUE_LIMITS, prepareJobs, type EnqueueLimits, type EnqueueRequest } from './enqueue.js';
import type { ApplicationClient, ApplicationDatabase } from '../store/within.js';
import type { JobClass } from '../job-types.js';
import type { EnqueueRequestOf } from './typed-jobs.js';
import { jobView, type JobView } from './job-view.js';
import { OutcomeListener } from './outcome-listener.js';
import type { EventsOptions, Outcome } from './outcome-streams.js';
import type { WaitOptions } from './outcome-waiters.js';
import { schedulesReport, type SchedulesReport } from './schedules.js';
import { loadTracing, sendTraced } from '../tracing/gate.js';
import { UnknownClassCheck, type UnknownClassRule } from './unknown-class.js';

export interface QueueOptions {
  /** A SQLite file path or a postgres:// URL. */
  database: string;
  clock?: Clock;
  limits?: Partial<EnqueueLimits>;
  /** Recorded as the actor of the ENQUEUED events. */
  actor?: string;
  /**
   * A class no supervisor has ever served: 'warn' once per class per process (default; only once supervisors have
   * served others on the database), 'refuse' (InvalidInputError UNKNOWN_CLASS), or 'ignore'.
   */
  unknownClass?: UnknownClassRule;
  /** The classes of the config the application runs (`config.classes.map((c) => c.name)`): never taken for typos. */
  classes?: Iterable<string>;
}

export interface EnqueueOptions {
  /** PostgreSQL: a pg `Client` or `PoolClient` that ran BEGIN; never committed, rolled back or released by leasehold. */
  tx?: ApplicationClient;
}

export interface SyncEnqueueOptions {
  /** SQLite: the application's better-sqlite3 Database, open on the queue's file. */
  tx: ApplicationDatabase;
}

export type { JobView };

export interface JobDetails<C extends JobClass = JobClass> {
  job: JobView<C>;
  /** Each with its error_stack: the thrown error's stack and cause chain, or a dead child's last words. */
  attempts: AttemptRow[];
  events: EventRow[];
  /** The attempts' own log lines (ctx.log), by attempt, in order. */
  logs: JobLogRow[];
}

/** The producer's side of leasehold: enqueue and look. */
export class Queue<S extends ProducerStore = Store> {
  readonly store: S;
  private readonly clock: Clock;
  private readonly limits: EnqueueLimits;
  private readonly actor: string;
  private readonly unknownClass: UnknownClassCheck;
  /** The classes of the application's config (`classes`), taken as known. */
  private readonly classes: readonly string[];
  private outcomeListener: OutcomeListener | undefined;

  constructor(store: S, options: Omit<QueueOptions, 'database'> = {}) {
    this.store = store;
    this.clock = options.clock ?? store.clock;
    this.limits = { ...DEFAULT_ENQUEUE_LIMITS, ...options.limits };
    this.actor = options.actor ?? 'producer';
    this.classes = [...(options.classes ?? [])];
    this.unknownClass = new UnknownClassCheck(store, options.unknownClass ?? 'warn', this.classes);
    // A producer: its first enqueue finds tracing loaded (openQueue awaits it; a queue built on a store may enqueue at once).
    void loadTracing();
  }

  /**
   * Check and insert one job. With `tx` (PostgreSQL), on the application's
   * client inside the transaction it began: the job commits or rolls back
   * with the application's writes.
   */
  async enqueue<C extends JobClass>(request: EnqueueRequestOf<C>, options: EnqueueOptions = {}): Promise<InsertedJob> {
    const [inserted] = await this.enqueueMany([request], options);
    return inserted as InsertedJob;
  }

  /** All or nothing: every request is checked before anything is written, then one transaction (or `tx`'s) inserts them. */
  async enqueueMany<C extends JobClass>(
    requests: EnqueueRequestOf<C>[],
    options: EnqueueOptions = {},
  ): Promise<InsertedJob[]> {
    const jobs = this.prepare(requests);
    await this.unknownClass.check(jobs.map((job) => job.class));
    const { tx } = options;
    if (tx === undefined) return sendTraced(jobs, () => this.store.jobInsert({ jobs, actor: this.actor }));
    return sendTraced(jobs, () => this.store.jobInsertWithin({ tx, jobs, actor: this.actor }));
  }

  /**
   * SQLite: check and insert one job on the application's own better-sqlite3
   * Database (open on the queue's file), inside its `db.transaction(...)`, so
   * the job commits with the application's rows. Synchronous, because such a
   * transaction cannot span an await.
   */
  enqueueSync<C extends JobClass>(request: EnqueueRequestOf<C>, options: SyncEnqueueOptions): InsertedJob {
    return this.enqueueManySync([request], options)[0] as InsertedJob;
  }

  enqueueManySync<C extends JobClass>(requests: EnqueueRequestOf<C>[], options: SyncEnqueueOptions): InsertedJob[] {
    const jobs = this.prepare(requests);
    const producer = this.store.onApplicationDatabase(options.tx);
    this.unknownClass.checkSync(
      jobs.map((job) => job.class),
      producer,
    );
    return sendTraced(jobs, () => producer.jobInsert({ jobs, actor: this.actor }));
  }

  private prepare(requests: readonly EnqueueRequestOf[]): NewJob[] {
    return prepareJobs(requests as readonly EnqueueRequest[], this.clock, this.limits);
  }

  async get(id: number): Promise<JobDetails | undefined> {
    const job = await this.store.jobGet({ id });
    if (job === undefined) return undefined;
    const [attempts, events, logs] = await Promise.all([
      this.store.attemptList({ jobId: id }),
      this.store.eventList({ jobId: id }),
      this.store.logList({ jobId: id }),
    ]);
    return { job: jobView(job), attempts, events, logs };
  }

  async list(filter: Partial<JobListFilter> = {}): Promise<JobRow[]> {
    return this.store.jobList({ limit: 50, ...filter });
  }

  /**
   * The job once it has ended (SUCCEEDED, FAILED or CANCELLED); at once when
   * it already has. A retry in between is no end: a job that fails twice and
   * then succeeds resolves once, SUCCEEDED. Rejects with NotFoundError when
   * there is no such job, WaitTimeoutError (`TIMEOUT:WAIT`) after
   * `timeoutMs`, the signal's reason when `signal` aborts, and
   * QueueClosedError when the queue closes first. Every wait of a Queue
   * shares one listener (guide: docs/guides/waiting-for-outcomes.md).
   */
  async waitFor<C extends JobClass = JobClass>(id: number, options: WaitOptions = {}): Promise<JobView<C>> {
    return jobView(await this.outcomes.waitFor(id, options)) as JobView<C>;
  }

  /**
   * The outcomes of jobs as they end, read from the database in an order no
   * later commit can break: `{ id, class, status, error_code, finished_at,
   * cursor }`. `after: cursor` goes on right after that outcome, so a
   * consumer that stops and comes back misses none and sees none twice;
   * `after: '0'` starts from the oldest outcome retention kept; without
   * `after` it starts now, after the newest outcome it can read. `classes`
   * keeps those classes' outcomes. Ends when `signal` aborts (a pending
   * `next()` rejects with its reason), on `break`, and when the queue closes.
   * Throws InvalidInputError for a cursor it did not give out.
   */
  events<C extends JobClass = JobClass>(options: EventsOptions<C> = {}): AsyncIterableIterator<Outcome<C>> {
    return this.outcomes.events(options) as AsyncIterableIterator<Outcome> as AsyncIterableIterator<Outcome<C>>;
  }

  /** Started on the first waitFor or events, shared by all of them. */
  private get outcomes(): OutcomeListener {
    this.outcomeListener ??= new OutcomeListener(this.store);
    return this.outcomeListener;
  }

  /** Ends every waitFor (QueueClosedError) and every events iterator, then the store. */
  async close(): Promise<void> {
    await this.outcomeListener?.close();
    await this.store.close();
  }

  // The controls below are `leasehold cancel/retry/pause/resume/stats/schedules` (src/queue/controls.ts), recorded
  // with this Queue's actor; they need the operator's role of the store, which openQueue's store has.

  /**
   * Cancel a job: a QUEUED one at once (CANCELLED); a CLAIMED or RUNNING one
   * is marked, and its worker aborts it at its next heartbeat
   * (`cancel_requested`). Cancelling again is no error (`already_requested`,
   * `already_cancelled`). Throws NotFoundError when there is no such job, and
   * JobStateError (`INVALID_INPUT:NOT_CANCELLABLE`) when it already ended
   * SUCCEEDED or FAILED.
   */
  async cancel(this: Queue<OperatorStore>, id: number): Promise<CancelResult> {
    return cancelJob(this.store, id, this.actor);
  }

  /**
   * `retry(id)`: a FAILED job runs once more, now, with one more attempt
   * allowed. Throws NotFoundError when there is no such job, and
   * JobStateError (`INVALID_INPUT:NOT_FAILED`) when it is not FAILED.
   *
   * `retry({ status: 'FAILED', class, errorCode, throughId, limit })`: every
   * FAILED job of the filter (all optional but `status`; `throughId` and
   * `limit` bound it to jobs up to that id and to that many), in batches;
   * resolves to how many were queued, 0 when none match.
   */
  retry(this: Queue<OperatorStore>, id: number): Promise<RetryResult>;
  retry(this: Queue<OperatorStore>, filter: RetryFailedFilter): Promise<{ count: number }>;
  async retry(
    this: Queue<OperatorStore>,
    target: number | RetryFailedFilter,
  ): Promise<RetryResult | { count: number }> {
    return typeof target === 'number'
      ? retryJob(this.store, target, this.actor)
      : retryFailed(this.store, target, this.actor);
  }

  /**
   * No job of the class starts, on any host, until it is resumed; jobs
   * running go on. Pausing a paused class is no error (`already_paused`). A
   * class that neither `classes` nor any supervisor has named is refused
   * (`INVALID_INPUT:CLASS`, with the closest known name), nothing written.
   */
  async pause(this: Queue<OperatorStore & ProducerStore>, jobClass: string): Promise<PauseResult> {
    return pauseClass(this.store, jobClass, this.actor, this.classes);
  }

  /** Let a paused class's jobs start again; a class that is not paused: `not_paused`, nothing written. Refused as `pause` refuses. */
  async resume(this: Queue<OperatorStore & ProducerStore>, jobClass: string): Promise<ResumeResult> {
    return resumeClass(this.store, jobClass, this.actor, this.classes);
  }

  /**
   * The object `leasehold stats --json` prints. `config` (a loaded
   * queue.yaml) gives the retention policy and the classes whose queues and
   * rate limits show, as `--config` does. Throws InvalidInputError for a
   * `windowMs` or `limit` out of range.
   */
  async stats(this: Queue<OperatorStore & MaintenanceStore>, request: StatsRequest = {}): Promise<StatsReport> {
    return statsReport(this.store, this.clock.now(), request);
  }

  /** The object `leasehold schedules --json` prints: the config's schedules, their next and last runs. */
  async schedules(
    this: Queue<ProducerStore & Pick<SchedulerStore, 'scheduleList'>>,
    config: Pick<LeaseholdConfig, 'classes'>,
  ): Promise<SchedulesReport> {
    return schedulesReport(this.store, config, this.clock.now());
  }
}

/**
 * Open the queue in `options.database` for enqueues, reads and controls. It
 * creates nothing: a database without leasehold's tables throws
 * SchemaMissingError (`leasehold migrate`, `migrate()` or a supervisor's
 * start creates them).
 */
export async function openQueue(options: QueueOptions): Promise<Queue> {
  const [store] = await Promise.all([
    openStore(options.database, { clock: options.clock, create: false }),
    loadTracing(),
  ]);
  return new Queue(store, options);
}
