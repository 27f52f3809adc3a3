/** The Store's role for producers. */
import type {
  Connection,
  EventRow,
  InsertedJob,
  JobListFilter,
  JobLogRow,
  JobRow,
  AttemptRow,
  NewJob,
  RelatedJob,
} from './data.js';
import type { OutcomeEventRow, OutcomePosition } from './outcome-rows.js';
import type { WakeWatch } from './wake-watch.js';
import type { ApplicationClient, ApplicationDatabase, SyncProducer } from './within.js';

/** Producers (the library's Queue): enqueue, and read a job back. */
export interface ProducerStore extends Connection {
  jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]>;
  /**
   * PostgreSQL: insert on the application's client, inside the transaction it
   * began, so they commit or roll back together. Never commits, rolls back or
   * releases the client. SQLite refuses (it needs `jobInsertWithinSync`).
   */
  jobInsertWithin(params: { tx: ApplicationClient; jobs: NewJob[]; actor: string }): Promise<InsertedJob[]>;
  /** SQLite: the producer's statements on the application's own Database (same file), synchronous. PostgreSQL refuses. */
  onApplicationDatabase(tx: ApplicationDatabase): SyncProducer;
  jobGet(params: { id: number }): Promise<JobRow | undefined>;
  jobList(params: JobListFilter): Promise<JobRow[]>;
  /** The jobs this one waits or waited for, by id (those retention has not deleted). */
  jobParents(params: { id: number }): Promise<RelatedJob[]>;
  /** The first `limit` jobs that wait or waited for this one, by id. */
  jobChildren(params: { id: number; limit: number }): Promise<RelatedJob[]>;
  attemptList(params: { jobId: number }): Promise<AttemptRow[]>;
  eventList(params: { jobId: number }): Promise<EventRow[]>;
  /** Whether a child of the class was ever registered in `workers`, on any host. */
  workerClassServed(params: { class: string }): Promise<boolean>;
  /** The classes any child was ever registered with, on any host, by name (at most `limit`). */
  workerServedClasses(params: { limit: number }): Promise<string[]>;
  /** Its attempts' own log lines (ctx.log), by attempt, in order. */
  logList(params: { jobId: number }): Promise<JobLogRow[]>;
  /** Those of the jobs that have ended (SUCCEEDED, FAILED, CANCELLED), in one read; an id left out has not, or is no job. */
  jobsEnded(params: { ids: number[] }): Promise<JobRow[]>;
  /**
   * Up to `limit` terminal events after `after`, in the order outcomes are
   * followed (outcome-rows.ts). PostgreSQL reads only those written by
   * transactions older than every transaction still open, so none can commit
   * behind a reader.
   */
  outcomeEventsAfter(params: { after: OutcomePosition; limit: number }): Promise<OutcomeEventRow[]>;
  /** Where a reader starting now stands: after the newest outcome outcomeEventsAfter can read (OUTCOMES_START: none). */
  outcomeLatest(): Promise<OutcomePosition>;
  /**
   * Wake-ups about outcomes (PostgreSQL: LISTEN, one notification per
   * transaction that ends jobs; SQLite: the watch on its WAL file, which
   * fires on any commit, once until rearmed). A hint, as `subscribe`'s: read
   * the data, and keep a poll. A broken connection goes to `onError`,
   * `onOutcome` runs, and it listens again with backoff (`onOutcome` runs
   * once it does). Resolves once listening (PostgreSQL with `listen=off`:
   * never listens).
   */
  outcomesSubscribe(onOutcome: () => void, onError: (error: Error) => void): Promise<WakeWatch>;
}
