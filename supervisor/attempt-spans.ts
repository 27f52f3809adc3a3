/**
 * The spans of attempts whose child died mid-job. The dead child's span
 * object died with it, so the supervisor emits each attempt's span itself,
 * in the trace stored with its job, from the claim to the take-back.
 */
import type { RecoveredJob } from '../src/store/types.js';
import { tracing } from '../src/tracing/gate.js';

/** `cause`: the take-back's error code, and the child's end and last words. */
export function endTakenBackAttempts(jobs: readonly RecoveredJob[], cause: { code: string; message: string }): void {
  const spans = tracing();
  if (spans === undefined) return;
  for (const job of jobs) spans.takenBack(job, cause);
}
