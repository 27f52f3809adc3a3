/** The library entry point for producers and operators: enqueue, get, list, and the CLI's controls. */
export {
  openQueue,
  Queue,
  type QueueOptions,
  type JobDetails,
  type JobView,
  type EnqueueOptions,
  type SyncEnqueueOptions,
} from './queue/queue.js';
export type { WaitOptions } from './queue/outcome-waiters.js';
export type { Outcome, EventsOptions } from './queue/outcome-streams.js';
export { FROM_THE_BEGINNING } from './queue/outcome-cursor.js';
export type { ApplicationClient, ApplicationDatabase } from './store/within.js';
export type { EnqueueRequest, EnqueueLimits } from './queue/enqueue.js';
export type { Jobs, JobClass, PayloadOf, ResultOf } from './job-types.js';
export type { EnqueueRequestOf } from './queue/typed-jobs.js';
export {
  defineHandler,
  type Handler,
  type HandlerContext,
  type HandlerJob,
  type HandlerLog,
  type HandlerSetup,
  type HandlerTeardown,
  type Middleware,
  type PayloadParser,
  type SetupContext,
} from './handler.js';
export { migrate, openStore } from './store/open.js';
// The store's roles a tool opens it for, and the rows and names its reads return: not the workers' and supervisors' own calls.
export type {
  Store,
  ProducerStore,
  OperatorStore,
  AttemptRow,
  AttemptStatus,
  CancelOutcome,
  EventRow,
  InsertedJob,
  JobEventName,
  JobListFilter,
  JobLogLine,
  JobLogRow,
  JobRow,
  JobStatus,
  KeyScope,
  OnParentFailure,
  PauseOutcome,
  RelatedJob,
  ResumeOutcome,
  RetryOutcome,
  TerminalStatus,
  WorkerKind,
  WorkerRow,
  WorkerState,
} from './store/types.js';
export { JOB_STATUSES, KEY_SCOPES, ON_PARENT_FAILURE, TERMINAL_STATUSES } from './store/types.js';
export {
  LeaseholdError,
  ConfigError,
  InvalidInputError,
  JobStateError,
  LeaseLostError,
  NonRetryableError,
  NotFoundError,
  QueueClosedError,
  SchemaMissingError,
  WaitTimeoutError,
} from './errors.js';
export { systemClock, type Clock } from './clock.js';
export type { CancelResult, RetryResult, RetryFailedFilter, PauseResult, ResumeResult } from './queue/controls.js';
export type { StatsReport, StatsRequest } from './reports/stats.js';
export type { SchedulesReport, ScheduleView } from './queue/schedules.js';
export { loadConfig, type ConfigSource } from './config/load.js';
export type { ConfigObject, LeaseholdConfig } from './config/schema.js';
