/**
 * The rules of flows, decided without a database: where a new job with
 * parents starts, and what a parent's end does to a WAITING dependent. The
 * SQLite driver applies them here; PostgreSQL's leasehold_insert_jobs and
 * leasehold_after_outcomes apply the same rules inside the server, under the
 * locks that make them race-free (the conformance table holds the two alike).
 */
import type { JobStatus, OnParentFailure, TerminalStatus } from './data.js';

export const DEPENDENCY_FAILED = 'DEPENDENCY:FAILED';
export const DEPENDENCY_CANCELLED = 'DEPENDENCY:CANCELLED';
/** The codes of a dependent a parent's end cancelled: a retry of that parent can bring it back (revivedState). */
export const CANCELLED_BY_FLOW = `('${DEPENDENCY_FAILED}', '${DEPENDENCY_CANCELLED}')`;

/** A parent as a dependent's enqueue reads it. */
export interface ParentState {
  id: number;
  status: JobStatus;
}

/** How a new job with parents starts. */
export type BornState =
  | { status: 'QUEUED' }
  | { status: 'WAITING'; pendingParents: number }
  | { status: 'CANCELLED'; code: string; detail: string; parent: number };

const ENDED: ReadonlySet<JobStatus> = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export function isEnded(status: JobStatus): status is TerminalStatus {
  return ENDED.has(status);
}

/** The error a dependent is cancelled with when `parent` ended `status` (FAILED or CANCELLED). */
function cancelledBy(parent: number, status: 'FAILED' | 'CANCELLED') {
  return {
    code: status === 'FAILED' ? DEPENDENCY_FAILED : DEPENDENCY_CANCELLED,
    detail: `parent job ${parent} ended ${status}`,
  };
}

/**
 * Parents sorted by id. A parent that already failed or was cancelled
 * cancels the job at once (the lowest such id is named), unless it runs
 * whatever its parents do; else it waits for the parents that have not
 * ended, or is queued when none is left.
 */
export function bornState(parents: readonly ParentState[], onParentFailure: OnParentFailure): BornState {
  if (onParentFailure === 'cancel') {
    const failed = parents.find((p) => p.status === 'FAILED' || p.status === 'CANCELLED');
    if (failed !== undefined)
      return {
        status: 'CANCELLED',
        parent: failed.id,
        ...cancelledBy(failed.id, failed.status as 'FAILED' | 'CANCELLED'),
      };
  }
  const pendingParents = parents.filter((p) => !isEnded(p.status)).length;
  return pendingParents === 0 ? { status: 'QUEUED' } : { status: 'WAITING', pendingParents };
}

/**
 * A dependent a parent's end cancelled, once one of its parents is retried
 * (or revived): WAITING again for the parents that have not ended, unless
 * one of them still stands failed or cancelled (it would cancel the job
 * again). The retried parent is queued, so at least one is pending.
 */
export function revivedState(parents: readonly ParentState[], onParentFailure: OnParentFailure): number | undefined {
  const state = bornState(parents, onParentFailure);
  return state.status === 'WAITING' ? state.pendingParents : undefined;
}

/** What a parent's end does to a WAITING dependent: count it down (queued at zero), or cancel it. */
export type DependentFate = { type: 'countDown' } | { type: 'cancel'; code: string; detail: string };

export function dependentFate(parent: number, ended: TerminalStatus, onParentFailure: OnParentFailure): DependentFate {
  if (ended === 'SUCCEEDED' || onParentFailure === 'run') return { type: 'countDown' };
  return { type: 'cancel', ...cancelledBy(parent, ended) };
}
