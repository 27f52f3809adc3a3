/**
 * The timeline's wording: every row a write appends to job_events, planned
 * without a database (the outcome plans add theirs through `event` too).
 */
import type { ClaimFacts } from './facts.js';
import { CANCEL_REQUESTED } from './outcome-rows.js';
import { eventDetail } from './policy.js';
import type { JobEventName, LeaseRef, NewJob } from './types.js';

/** One timeline row to append; `detail` is already short JSON. */
export interface PlannedEvent {
  jobId: number;
  ts: number;
  event: JobEventName;
  actor: string;
  detail: string;
}

/** A timeline row: `detail` made short JSON. */
export function event(
  jobId: number,
  ts: number,
  name: JobEventName,
  actor: string,
  detail: Record<string, unknown>,
): PlannedEvent {
  return { jobId, ts, event: name, actor, detail: eventDetail(detail) };
}

/** Who writes what a parent's end does to its dependents. */
export const FLOW_ACTOR = 'flow';

/** The timeline entries that are not part of an outcome plan. */
export const EVENTS = {
  enqueued: (id: number, job: Pick<NewJob, 'runAt' | 'priority'>, now: number, actor: string) =>
    event(id, now, 'ENQUEUED', actor, { run_at: job.runAt, priority: job.priority }),
  /** A claim that ended before its start was written (handed back, or taken back), stamped when it was made. */
  claimed: (facts: ClaimFacts) =>
    event(facts.id, facts.claimed_at ?? 0, 'CLAIMED', facts.owner_id ?? 'unknown', { attempt: facts.attempts }),
  /** A start carries its claim: who claimed the job and when (the claim itself writes no event). */
  started: (facts: ClaimFacts, startedAt: number) =>
    event(facts.id, startedAt, 'STARTED', 'worker', {
      attempt: facts.attempts,
      owner_id: facts.owner_id,
      claimed_at: facts.claimed_at,
    }),
  cancelledQueued: (id: number, now: number, actor: string, from: 'QUEUED' | 'WAITING') =>
    event(id, now, 'CANCELLED', actor, { stage: 'done', from }),
  cancelRequested: (id: number, now: number, actor: string, ownerId: string | null) =>
    event(id, now, 'CANCELLED', actor, { stage: CANCEL_REQUESTED, owner_id: ownerId }),
  /** A dependent cancelled because a parent failed or was cancelled (`code` DEPENDENCY:FAILED or DEPENDENCY:CANCELLED). */
  dependencyCancelled: (id: number, now: number, code: string, parent: number) =>
    event(id, now, 'CANCELLED', FLOW_ACTOR, { code, parent }),
  /** A WAITING job whose last parent ended: queued. */
  dependenciesMet: (id: number, now: number, parent: number) =>
    event(id, now, 'DEPENDENCIES_MET', FLOW_ACTOR, { parent }),
  /** A dependent a parent's failure cancelled, WAITING again: that parent was retried (or, down the chain, revived). */
  revived: (id: number, now: number, parent: number) => event(id, now, 'REVIVED', FLOW_ACTOR, { parent }),
  manualRetry: (id: number, now: number, actor: string) =>
    event(id, now, 'RETRY_SCHEDULED', actor, { manual: true, run_at: now }),
  /** The other half of every fenced write: a stale holder was turned away. */
  zombie: (ref: LeaseRef, now: number, operation: string) =>
    event(ref.id, now, 'ZOMBIE_WRITE_REJECTED', 'worker', { op: operation, lease_token: ref.leaseToken }),
};
