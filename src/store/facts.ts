/**
 * What the drivers read about the jobs a worker holds or has just claimed
 * (column names, as both select them), and what a worker or a plan makes of
 * those rows.
 */
import type { ClaimedJob, ClaimRecord, LeaseRef } from './types.js';

/** The facts about a held job that its outcome depends on, as both drivers select them (column names). */
export interface HeldFacts {
  id: number;
  class: string;
  status: 'CLAIMED' | 'RUNNING';
  attempts: number;
  releases: number;
  max_retries: number;
  cancel_requested_at: number | null;
  owner_id: string | null;
  lease_token: string;
  claimed_at: number | null;
  lease_expires_at: number | null;
}

/** A take-back's facts: the held ones, and the trace context its attempt's span is ended in. */
export interface RecoveryFacts extends HeldFacts {
  /** A held row's claim always has its time. */
  claimed_at: number;
  traceparent: string | null;
}

/**
 * Facts a holder's settlement may be written under: held, and not past the
 * expiry the holder itself last wrote (by its own clock). Past it the holder
 * has given the job up, by guarantee 10 (Database faults are weather, not
 * death), and a write still in flight then is a stale one, like any zombie's.
 */
export function liveFacts(facts: HeldFacts | undefined, now: number): HeldFacts | undefined {
  return facts !== undefined && facts.lease_expires_at !== null && facts.lease_expires_at > now ? facts : undefined;
}

/** A claimed row as the claim statement of every driver returns it. */
export interface ClaimedRow {
  id: number;
  class: string;
  payload: string;
  priority: number;
  run_at: number;
  attempts: number;
  max_retries: number;
  lease_token: string;
  lease_expires_at: number;
  created_at: number;
  traceparent: string | null;
}

/** What the timeline says about a claim: its job, attempt, owner and time. */
export type ClaimFacts = Pick<HeldFacts, 'id' | 'attempts' | 'owner_id' | 'claimed_at'>;

/** Claimed rows as the worker gets them, in claim order (RETURNING promises no order), made by `ownerId` at `claimedAt`. */
export function claimedJobs(rows: ClaimedRow[], ownerId: string, claimedAt: number): ClaimedJob[] {
  return [...rows]
    .sort((a, b) => b.priority - a.priority || a.run_at - b.run_at || a.id - b.id)
    .map((row) => ({
      id: row.id,
      class: row.class,
      payload: row.payload,
      priority: row.priority,
      attempt: row.attempts,
      ownerId,
      claimedAt,
      maxRetries: row.max_retries,
      leaseToken: row.lease_token,
      leaseExpiresAt: row.lease_expires_at,
      createdAt: row.created_at,
      traceparent: row.traceparent,
    }));
}

/**
 * The record a holder passes with its writes: the claim's three facts, not
 * the job it holds (its payload would cross to the writer and back for nothing).
 */
export function claimRecord(job: ClaimRecord): ClaimRecord {
  return { attempt: job.attempt, ownerId: job.ownerId, claimedAt: job.claimedAt };
}

/** The claim facts a holder's own record of its claim gives: those its lease token names in the row. */
export function claimFacts(ref: LeaseRef, claim: ClaimRecord): ClaimFacts {
  return { id: ref.id, attempts: claim.attempt, owner_id: claim.ownerId, claimed_at: claim.claimedAt };
}
