/**
 * What the supervisor's parts know of a child and do to it, each part
 * through its own interface (ClassPool and a retirement: PoolChild; the
 * health watch: WatchedChild), so that their tests can hand them fakes.
 * ChildHandle (child-process.ts) is the real child behind both.
 */
import type { ErrorSummary } from '../src/errors.js';
import type { ClassConfig } from '../src/config/schema.js';
import type { ChildStart, ChildToSupervisor, SupervisorToChild } from '../src/ipc/protocol.js';
import type { DbOutage } from '../src/store/faults.js';
import type { JobUsage, UsageSample } from './job-usage.js';
import type { LastWords, UncaughtError } from './last-words.js';

/** Why a healthy child is taken out of service: the supervisor stops, or a reload replaces or removes it. */
export type RetireReason = 'shutdown' | 'reload';
export type KillReason = 'max_runtime' | 'unresponsive' | 'memory' | 'stalled' | RetireReason;
export type ChildState = 'starting' | 'ready' | 'busy' | 'stopping' | 'exited';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningJob {
  jobId: number;
  attempt: number;
  leaseToken: string;
  /** When the child began the job, as its flight recorder says (its start reaches the database later, or with the outcome). */
  startedAt: number;
  /** What the health watch's samples of the child showed while it ran the job. */
  usage: JobUsage;
}

/** Why we stopped a child, the error code the culprit's attempt ends with, and the culprit when one job is to blame. */
export interface ChildKill {
  reason: KillReason;
  code: string;
  detail: string;
  culprit: RunningJob | undefined;
}

export interface ChildEvents<C> {
  message(child: C, message: ChildToSupervisor): void;
  output(child: C, stream: 'stdout' | 'stderr', line: string): void;
  exit(child: C, exit: ChildExit): void;
}

/** What a child is started with, but for what its handle adds: its flight recorder file, and whether the writer makes its writes. */
export type ChildSpec = Omit<ChildStart, 'flightRecord' | 'writer'>;

/** Starts a child process for `start`, whose messages, output and exit go to `events`. */
export type StartChild<C> = (start: ChildSpec, events: ChildEvents<C>) => C;

/** A child as its pool sees it: what it was started with, what it told us, and the transitions the pool asks of it. */
export interface PoolChild {
  readonly pid: number;
  readonly workerId: string;
  /** The class config it was started with (a reload replaces children, never their config), and the result cap. */
  readonly config: ClassConfig;
  readonly resultLimitBytes: number;
  readonly alive: boolean;
  readonly exited: Promise<ChildExit>;
  /** How many jobs it has finished: a child that did work and then crashed is restarted without delay growth. */
  readonly jobsFinished: number;
  readonly killed: ChildKill | undefined;
  readonly startupError: string | undefined;
  /** Whether another try may start where this one could not (a handler's failed setup), unlike a handler that cannot load. */
  readonly startupRestartable: boolean;
  /** Set once it was asked to drain: it is leaving, not crashing, and its slot may not be refilled. */
  readonly retiring: RetireReason | undefined;
  /** The database outage it reports, while it lasts. */
  readonly dbOutage: DbOutage | undefined;
  /** What it said last: for the attempt its death is charged to. */
  readonly lastWords: LastWords;
  /** Jobs whose handlers it runs now, or ran when it died, as its flight recorder says. */
  readonly started: ReadonlyMap<number, RunningJob>;
  send(message: SupervisorToChild): void;
  diedOf(uncaught: UncaughtError): void;
  markReady(): void;
  startupFailed(error: ErrorSummary): void;
  reportOutage(outage: DbOutage | undefined): void;
  /** It says `count` outcomes are written. */
  jobsFinishedBy(count: number): void;
  /** Why it did not become ready (it exited first, or was not ready within `timeoutMs`: then it is killed), or undefined once it is. */
  untilReady(timeoutMs: number): Promise<string | undefined>;
  retire(reason: RetireReason, graceMs: number): void;
  forceKill(reason: KillReason, code: string, detail: string): void;
  soleSuspect(): RunningJob | undefined;
}

/** A child as the health watch sees it: its liveness, its jobs, and the kill. */
export interface WatchedChild {
  readonly pid: number;
  readonly workerId: string;
  readonly config: ClassConfig;
  readonly state: ChildState;
  readonly alive: boolean;
  /** The job it started last, of those it runs now. */
  readonly job: RunningJob | undefined;
  /** Jobs whose handlers it runs now, as its flight recorder says. */
  readonly started: ReadonlyMap<number, RunningJob>;
  readonly killed: ChildKill | undefined;
  readonly dbOutage: DbOutage | undefined;
  ping(): void;
  forgiveSilence(): void;
  unansweredForMs(): number;
  recordUsage(sample: UsageSample): void;
  kill(reason: KillReason, code: string, detail: string, graceMs: number, culprit?: RunningJob): void;
}
