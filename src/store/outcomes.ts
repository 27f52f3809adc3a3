/**
 * What every driver writes about a held job, decided without a database: the
 * plan of writes an outcome makes (settle, release, recovery). A driver reads
 * the facts (facts.ts), asks for a plan, and runs it with its own fenced
 * statements, so the rules live here once, and the timeline's wording in
 * timeline.ts.
 */
import { LeaseLostError } from '../errors.js';
import { claimFacts, type ClaimFacts, type HeldFacts, type RecoveryFacts } from './facts.js';
import { afterFailure } from './policy.js';
import { event, EVENTS, type PlannedEvent } from './timeline.js';
import type {
  AttemptCost,
  AttemptLogs,
  AttemptStatus,
  ClaimRecord,
  FailureInput,
  JobEventName,
  LeaseRef,
  OwnerRecovery,
  RecoveredJob,
  RecoverParams,
  RetryAccount,
  Settlement,
  SettleResult,
  TerminalStatus,
} from './types.js';

/** The one write to `jobs` an outcome makes; every driver has a statement fenced on (id, lease_token, held) for each. */
export type JobWrite =
  | { type: 'complete'; result: string | null }
  | { type: 'requeue'; runAt: number; code: string; detail: string }
  | { type: 'finishBadly'; status: 'FAILED' | 'CANCELLED'; code: string; detail: string }
  | { type: 'release' };

/** How an outcome ends the claim's attempt row; the cost is null when nobody measured it, the stack when there is none. */
export interface AttemptEnd {
  status: AttemptStatus;
  code: string | null;
  detail: string | null;
  stack: string | null;
  cpuMs: number | null;
  peakRssBytes: number | null;
}

function attemptEnd(
  status: AttemptStatus,
  code: string | null,
  detail: string | null,
  cost: AttemptCost | undefined,
  stack?: string,
): AttemptEnd {
  return {
    status,
    code,
    detail,
    stack: stack ?? null,
    cpuMs: cost?.cpuMs ?? null,
    peakRssBytes: cost?.peakRssBytes ?? null,
  };
}

/** Everything one outcome writes about a held job, in the order a driver runs it: job, attempt, events. */
export interface OutcomePlan extends LeaseRef {
  attempt: number;
  /** The lazily written start (stamped only where the row has none yet), or null. */
  startedAt: number | null;
  job: JobWrite;
  attemptEnd: AttemptEnd;
  events: PlannedEvent[];
  /** Where the job went, and when it may run again when QUEUED. An end moves its WAITING dependents (`endedJob`). */
  status: 'SUCCEEDED' | 'QUEUED' | 'FAILED' | 'CANCELLED';
  runAt: number | null;
  /** For an attempt that failed: where it leaves the job's retries. */
  retry?: RetryAccount;
  /** The lines its handler logged, written with the outcome (job-logs.ts makes the rows). */
  logs?: AttemptLogs;
}

/** A fenced write that matched no row: recorded inside the transaction, then raised (by `fenced`) outside it, so the record commits. */
export const LOST = Symbol('lease lost');

/** A fenced write's outcome, or LeaseLostError when it was turned away. */
export function fenced<T>(ref: LeaseRef, operation: string, outcome: T | typeof LOST): T {
  if (outcome === LOST) throw new LeaseLostError(ref.id, ref.leaseToken, operation);
  return outcome;
}

type LeaseFacts = Pick<HeldFacts, 'lease_token'>;

function outcomeEvent(status: 'QUEUED' | 'FAILED' | 'CANCELLED'): JobEventName {
  return status === 'QUEUED' ? 'RETRY_SCHEDULED' : status;
}

type FailureFactsRow = Pick<
  HeldFacts,
  'id' | 'lease_token' | 'attempts' | 'releases' | 'max_retries' | 'cancel_requested_at'
>;

/** An attempt that ended badly: requeued after `runAt`, or FAILED / CANCELLED for good (events are the caller's). */
function failurePlan(
  facts: FailureFactsRow,
  startedAt: number | null,
  error: FailureInput,
  runAt: number,
  cost: AttemptCost | undefined,
): OutcomePlan {
  const { status, retry } = afterFailure(
    {
      attempts: facts.attempts,
      releases: facts.releases,
      maxRetries: facts.max_retries,
      cancelRequested: facts.cancel_requested_at !== null,
    },
    error,
  );
  const job: JobWrite =
    status === 'QUEUED'
      ? { type: 'requeue', runAt, code: error.code, detail: error.detail }
      : { type: 'finishBadly', status, code: error.code, detail: error.detail };
  return {
    id: facts.id,
    leaseToken: facts.lease_token,
    attempt: facts.attempts,
    startedAt,
    job,
    attemptEnd: attemptEnd(
      status === 'CANCELLED' ? 'CANCELLED' : 'FAILED',
      error.code,
      error.detail,
      cost,
      error.stack,
    ),
    events: [],
    status,
    runAt: status === 'QUEUED' ? runAt : null,
    retry,
  };
}

/**
 * The events a write that ends a claim owes the timeline first: the start
 * (carrying the claim) when the handler ran but its start was not written
 * yet, or the claim alone when it never started. A RUNNING row has both.
 */
function claimTrail(facts: ClaimFacts & Pick<HeldFacts, 'status'>, startedAt: number | null): PlannedEvent[] {
  if (facts.status !== 'CLAIMED') return [];
  return [startedAt === null ? EVENTS.claimed(facts) : EVENTS.started(facts, startedAt)];
}

function withClaimTrail(plan: OutcomePlan, facts: HeldFacts): OutcomePlan {
  return { ...plan, events: [...claimTrail(facts, plan.startedAt), ...plan.events] };
}

/** A held job handed back to the queue without spending a retry (shutdown, or claimed but never started). */
export function planRelease(facts: HeldFacts, now: number, actor: string, reason: string): OutcomePlan {
  return withClaimTrail(releasePlan(facts, now, actor, reason, null, undefined), facts);
}

function releasePlan(
  facts: HeldFacts,
  now: number,
  actor: string,
  reason: string,
  startedAt: number | null,
  cost: AttemptCost | undefined,
): OutcomePlan {
  return {
    id: facts.id,
    leaseToken: facts.lease_token,
    attempt: facts.attempts,
    startedAt,
    job: { type: 'release' },
    attemptEnd: attemptEnd('CANCELLED', 'LEASE:RELEASED', reason, cost),
    events: [event(facts.id, now, 'RELEASED', actor, { attempt: facts.attempts, reason })],
    status: 'QUEUED',
    runAt: now,
  };
}

/**
 * One worker verdict about a job it holds (`facts` read under the lease in
 * this transaction). A job whose start was not written yet gets its STARTED
 * event, stamped when the handler really started, just before its outcome.
 */
export function planSettlement(settlement: Settlement, facts: HeldFacts, now: number): OutcomePlan {
  const lazyStart = facts.status === 'CLAIMED' ? settlement.startedAt : null;
  const plan = withClaimTrail(verdictPlan(settlement.verdict, facts, now, lazyStart, settlement.cost), facts);
  if (settlement.logs !== undefined) plan.logs = settlement.logs;
  return plan;
}

function successPlan(
  facts: ClaimFacts & LeaseFacts,
  result: string | null,
  now: number,
  startedAt: number | null,
  cost: AttemptCost | undefined,
): OutcomePlan {
  return {
    id: facts.id,
    leaseToken: facts.lease_token,
    attempt: facts.attempts,
    startedAt,
    job: { type: 'complete', result },
    attemptEnd: attemptEnd('SUCCEEDED', null, null, cost),
    events: [event(facts.id, now, 'SUCCEEDED', 'worker', { attempt: facts.attempts })],
    status: 'SUCCEEDED',
    runAt: null,
  };
}

/** A success whose holder passed its claim record: what a driver may write without reading the row first. */
export type BlindSettlement = Settlement & {
  claim: ClaimRecord;
  verdict: Extract<Settlement['verdict'], { type: 'complete' }>;
};

/** A success planned without reading its row, and the claim trail it owes if the row's start is still unwritten. */
export interface BlindSuccess {
  plan: OutcomePlan;
  /** Due only where the row is still CLAIMED: the writer checks that under its fence, as planSettlement checks the facts. */
  trail: PlannedEvent[];
}

/**
 * A success planned from the holder's record of its claim (`claimFacts`):
 * the same plan planSettlement makes from the row, for a write that does not
 * read the row first. The start is planned as unwritten; a RUNNING row keeps
 * its own start and owes no trail.
 */
export function planBlindSuccess(settlement: BlindSettlement, now: number): BlindSuccess {
  const facts = Object.assign(claimFacts(settlement, settlement.claim), {
    lease_token: settlement.leaseToken,
    status: 'CLAIMED' as const,
  });
  const { startedAt, cost, verdict } = settlement;
  const plan = successPlan(facts, verdict.result, now, startedAt, cost);
  if (settlement.logs !== undefined) plan.logs = settlement.logs;
  return { plan, trail: claimTrail(facts, startedAt) };
}

function verdictPlan(
  verdict: Settlement['verdict'],
  facts: HeldFacts,
  now: number,
  startedAt: number | null,
  cost: AttemptCost | undefined,
): OutcomePlan {
  switch (verdict.type) {
    case 'complete':
      return successPlan(facts, verdict.result, now, startedAt, cost);
    case 'fail': {
      const runAt = now + verdict.retryDelayMs;
      const plan = failurePlan(facts, startedAt, verdict.error, runAt, cost);
      const outcome = plan.status as 'QUEUED' | 'FAILED' | 'CANCELLED';
      const detail = {
        attempt: facts.attempts,
        code: verdict.error.code,
        detail: verdict.error.detail,
        ...(outcome === 'QUEUED' ? { run_at: runAt } : {}),
      };
      return { ...plan, events: [event(facts.id, now, outcomeEvent(outcome), 'worker', detail)] };
    }
    case 'release':
      return releasePlan(facts, now, 'worker', verdict.reason, startedAt, cost);
  }
}

/**
 * Takes back a held job from a worker that is gone or silent. A claim counts
 * as a start: the worker may have begun the handler the moment its claim
 * committed, and nobody but that worker can prove it did not, so the attempt
 * ends FAILED with the given code and follows the retry policy, whoever takes
 * the job back. Only the holder's own handback (`planRelease`) is free.
 * `cost`: what the attempt cost, when whoever takes it back measured that.
 */
export function planRecovery(row: HeldFacts, params: RecoverParams, now: number, cost?: AttemptCost): OutcomePlan {
  const runAt = now + params.retryDelay(row.class, row.attempts);
  const error = {
    code: params.errorCode,
    detail: params.errorDetail,
    retryable: params.retryable ?? true,
    stack: params.errorStack,
  };
  const plan = failurePlan(row, null, error, runAt, cost);
  const outcome = plan.status as 'QUEUED' | 'FAILED' | 'CANCELLED';
  const taken = { attempt: row.attempts, owner_id: row.owner_id, code: params.errorCode, detail: params.errorDetail };
  const next = { attempt: row.attempts, code: params.errorCode, ...(outcome === 'QUEUED' ? { run_at: runAt } : {}) };
  const events = [
    event(row.id, now, params.event, params.actor, taken),
    event(row.id, now, outcomeEvent(outcome), params.actor, next),
  ];
  return withClaimTrail({ ...plan, events }, row);
}

/**
 * Takes back what a killed or crashed worker held. With a culprit named, only
 * the culprit spends a retry, and only its attempt gets the cost its child's
 * samples showed; the worker's other jobs were stopped because of it and go
 * back free, as victims.
 */
export function planOwnerRecovery(row: HeldFacts, params: OwnerRecovery, now: number): OutcomePlan {
  if (params.culpritJobId === undefined) return planRecovery(row, params, now);
  if (params.culpritJobId === row.id) return planRecovery(row, params, now, params.culpritCost);
  return planRelease(row, now, params.actor, `victim of job ${params.culpritJobId} (${params.errorCode})`);
}

/** The attempt a lease token names, with where its job stands now (column names). */
export interface EndedAttempt {
  job_id: number;
  lease_token: string;
  attempt: number;
  status: AttemptStatus;
  error_code: string | null;
  error_detail: string | null;
  job_status: string;
  job_attempts: number;
  run_at: number;
  result: string | null;
}

/** How a verdict ends its attempt, as the plans write it. */
function endsAttemptAs(verdict: Settlement['verdict'], attempt: EndedAttempt): boolean {
  switch (verdict.type) {
    case 'complete':
      return (
        attempt.status === 'SUCCEEDED' && attempt.job_attempts === attempt.attempt && attempt.result === verdict.result
      );
    case 'fail':
      return (
        (attempt.status === 'FAILED' || attempt.status === 'CANCELLED') &&
        attempt.error_code === verdict.error.code &&
        attempt.error_detail === verdict.error.detail
      );
    case 'release':
      return (
        attempt.status === 'CANCELLED' &&
        attempt.error_code === 'LEASE:RELEASED' &&
        attempt.error_detail === verdict.reason
      );
  }
}

/**
 * A settlement whose lease is gone may be the holder's own write sent again:
 * it committed, but the connection broke before the answer came back. Its
 * attempt then already ended exactly as this verdict ends it (nobody else
 * writes that verdict with this token), and the write counts as done, not as
 * a zombie's. Undefined: a stale write.
 */
export function ownEarlierSettlement(
  settlement: Settlement,
  attempt: EndedAttempt | undefined,
): SettleResult | undefined {
  if (attempt === undefined || !endsAttemptAs(settlement.verdict, attempt)) return undefined;
  const current = attempt.job_attempts === attempt.attempt;
  const queuedAt = current && attempt.job_status === 'QUEUED' ? attempt.run_at : null;
  const status =
    settlement.verdict.type === 'complete'
      ? 'SUCCEEDED'
      : attempt.status === 'CANCELLED' && settlement.verdict.type === 'fail'
        ? 'CANCELLED'
        : current && attempt.job_status === 'FAILED'
          ? 'FAILED'
          : 'QUEUED';
  return { id: settlement.id, held: true, status, runAt: status === 'QUEUED' ? queuedAt : null };
}

/** The job a plan ended, for its dependents (../flow-rules.ts), or undefined when it goes back to the queue. */
export function endedJob(plan: OutcomePlan): { id: number; status: TerminalStatus } | undefined {
  return plan.status === 'QUEUED' ? undefined : { id: plan.id, status: plan.status };
}

export function settleResult(plan: OutcomePlan): Extract<SettleResult, { held: true }> {
  // retry is undefined for a success: no spread on the path every job takes.
  return { id: plan.id, held: true, status: plan.status, runAt: plan.runAt, retry: plan.retry };
}

export function recoveredJob(row: RecoveryFacts, plan: OutcomePlan): RecoveredJob {
  return {
    id: row.id,
    class: row.class,
    attempt: row.attempts,
    ownerId: row.owner_id,
    leaseToken: row.lease_token,
    status: plan.status as RecoveredJob['status'],
    runAt: plan.runAt,
    released: plan.job.type === 'release',
    begun: row.status === 'RUNNING',
    retry: plan.retry,
    claimedAt: row.claimed_at,
    traceparent: row.traceparent,
  };
}
