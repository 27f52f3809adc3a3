/**
 * What the supervisor's parts tell the metrics when they learn of something.
 * The parts take one as an optional option and default to NO_METRICS, so
 * nothing changes for a caller that does not serve /metrics (the CLI, tests).
 * The Prometheus implementation is supervisor/metrics.ts.
 */
import type { JobOutcome, SuccessTally } from '../src/ipc/protocol.js';
import type { DbFaultKind } from '../src/store/faults.js';
import type { AttemptCost, RecoveredJob, TerminalStatus } from '../src/store/types.js';

/** Where a take-back happened: a child's exit, the sweeper, or a new supervisor cleaning up after an old one. */
export type RecoverySource = 'child_exit' | 'sweeper' | 'startup';

export interface MetricsSink {
  /** A child started a job it claimed. */
  jobsStarted(jobClass: string, count: number): void;
  /** A job left a child's hands. */
  jobFinished(jobClass: string, outcome: JobOutcome, durationMs: number): void;
  /** Successes a child counted (its SuccessTally): as many jobFinished SUCCEEDED, and jobCost for those it measured. */
  jobsSucceeded(jobClass: string, tally: SuccessTally): void;
  /** What an attempt of the class cost: as its child measured it, or as our samples showed for one it could not report (killed, crashed). */
  jobCost(jobClass: string, cost: AttemptCost): void;
  /** Jobs taken back from a dead or silent worker (or handed back at shutdown), under one error code. */
  jobsRecovered(jobs: readonly RecoveredJob[], code: string, source: RecoverySource): void;
  /** A child of the class was replaced. */
  childRestarted(jobClass: string): void;
  /** Retention deleted finished jobs. */
  jobsPruned(status: TerminalStatus, count: number): void;
  /** A database operation failed because the database was away, locked or full (ours or a child's). */
  dbError(kind: DbFaultKind): void;
}

const ignore = (): void => undefined;

export const NO_METRICS: MetricsSink = Object.freeze({
  jobsStarted: ignore,
  jobFinished: ignore,
  jobsSucceeded: ignore,
  jobCost: ignore,
  jobsRecovered: ignore,
  childRestarted: ignore,
  jobsPruned: ignore,
  dbError: ignore,
});
