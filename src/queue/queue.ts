import { systemClock, type Clock } from '../clock.js';
import { InvalidInputError } from '../errors.js';
import { openStore } from '../store/open.js';
import type {
  AttemptRow,
  EventRow,
  InsertedJob,
  JobLogRow,
  JobListFilter,
  JobRow,
  NewJob,
  ProducerStore,
  Store,
} from '../store/types.js';
import { DEFAULT_ENQUEUE_LIMITS, prepareJob, type EnqueueLimits, type EnqueueRequest } from './enqueue.js';
import type { ApplicationClient, ApplicationDatabase } from '../store/within.js';
import type { EnqueueRequestOf, JobClass, PayloadOf, ResultOf } from './typed-jobs.js';
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

/**
 * A job's row with its JSON columns parsed: payload, and result and progress (null when none), typed from the
 * Jobs registry: over a union of classes, a union discriminated by `class`.
 */
export type JobView<C extends JobClass = JobClass> = C extends unknown
  ? Omit<JobRow, 'class' | 'payload' | 'result' | 'progress'> & {
      class: C;
      payload: PayloadOf<C>;
      result: ResultOf<C> | null;
      progress: unknown;
    }
  : never;

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

  constructor(store: S, options: Omit<QueueOptions, 'database'> = {}) {
    this.store = store;
    this.clock = options.clock ?? systemClock;
    this.limits = { ...DEFAULT_ENQUEUE_LIMITS, ...options.limits };
    this.actor = options.actor ?? 'producer';
    this.unknownClass = new UnknownClassCheck(store, options.unknownClass ?? 'warn', options.classes);
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
    if (options.tx === undefined) return this.store.jobInsert({ jobs, actor: this.actor });
    return this.store.jobInsertWithin({ tx: options.tx, jobs, actor: this.actor });
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
    return producer.jobInsert({ jobs, actor: this.actor });
  }

  /** Each request checked and made a row; the first refused throws InvalidInputError, naming its place in a batch. */
  private prepare(requests: readonly EnqueueRequestOf[]): NewJob[] {
    return requests.map((request, index) => {
      try {
        return prepareJob(request as EnqueueRequest, this.clock, this.limits);
      } catch (error) {
        if (error instanceof InvalidInputError && requests.length > 1) {
          throw new InvalidInputError(error.code.split(':')[1] ?? 'JOB', `job ${index + 1}: ${error.message}`);
        }
        throw error;
      }
    });
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

  async close(): Promise<void> {
    await this.store.close();
  }
}

export async function openQueue(options: QueueOptions): Promise<Queue> {
  const store = await openStore(options.database, { clock: options.clock });
  return new Queue(store, options);
}

const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

/** Every stored JSON column was written as JSON (enqueue checks payloads, a worker stringifies results and progress). */
function jobView(job: JobRow): JobView {
  return { ...job, payload: parsed(job.payload), result: parsed(job.result), progress: parsed(job.progress) };
}
