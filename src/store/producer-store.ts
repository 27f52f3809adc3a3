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
} from './data.js';

/** Producers (the library's Queue): enqueue, and read a job back. */
export interface ProducerStore extends Connection {
  jobInsert(params: { jobs: NewJob[]; actor: string }): Promise<InsertedJob[]>;
  jobGet(params: { id: number }): Promise<JobRow | undefined>;
  jobList(params: JobListFilter): Promise<JobRow[]>;
  attemptList(params: { jobId: number }): Promise<AttemptRow[]>;
  eventList(params: { jobId: number }): Promise<EventRow[]>;
  /** Whether a child of the class was ever registered in `workers`, on any host. */
  workerClassServed(params: { class: string }): Promise<boolean>;
  /** The classes any child was ever registered with, on any host, by name (at most `limit`). */
  workerServedClasses(params: { limit: number }): Promise<string[]>;
  /** Its attempts' own log lines (ctx.log), by attempt, in order. */
  logList(params: { jobId: number }): Promise<JobLogRow[]>;
}
