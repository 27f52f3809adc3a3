/**
 * The spans of attempts whose holder could not end them. A dead child's span
 * objects died with it, and a holder gone silent elsewhere may never end its
 * own: the supervisor emits each such attempt's span, in the trace stored
 * with its job, from the attempt's start to the take-back.
 */
import type { RecoveredJob } from '../src/store/types.js';
import { tracing } from '../src/tracing/gate.js';
import type { TakenBackEnd } from '../src/tracing/spans.js';
import type { RunningJob } from './supervised-child.js';

/**
 * The attempts a dead child was running (its flight record's, matched by
 * lease token): a job it only held, or whose run it had ended (a drain
 * that released it), had no span open.
 */
export function endDeadChildAttempts(
  running: ReadonlyMap<number, RunningJob>,
  jobs: readonly RecoveredJob[],
  endOf: (job: RecoveredJob) => TakenBackEnd,
): void {
  const spans = tracing();
  if (spans === undefined) return;
  for (const job of jobs) {
    const run = running.get(job.id);
    if (run?.leaseToken === job.leaseToken) spans.takenBack({ ...job, startedAt: run.startedAt }, endOf(job));
  }
}

/** The attempts of leases a sweep took back that their holder had begun (RUNNING), from their claim. */
export function endExpiredAttempts(jobs: readonly RecoveredJob[], error: { code: string; message: string }): void {
  const spans = tracing();
  if (spans === undefined) return;
  for (const job of jobs)
    if (job.begun) spans.takenBack({ ...job, startedAt: job.claimedAt }, { outcome: 'expired', error });
}
