/**
 * One-job shorthands over the worker's batch writes, for tests: each is a
 * batch of one through jobsSettle / leasesExtend, and a lost lease raises
 * LeaseLostError (as a worker's own writes do) instead of being reported.
 */
import { LeaseLostError } from '../../src/errors.js';
import { DEFAULT_MAX_RETRIES } from '../../src/limits.js';
import type {
  AttemptCost,
  ClaimedJob,
  ClaimRequest,
  FailureInput,
  LeaseRef,
  Settlement,
  SettleResult,
  WorkerStore,
} from '../../src/store/types.js';

export type FailOutcome = { status: 'QUEUED'; runAt: number } | { status: 'FAILED' } | { status: 'CANCELLED' };

/** A claim as a test asks for it: the claimer's class max_retries is the schema's default unless given. */
export type TestClaim = Omit<ClaimRequest, 'classMaxRetries'> & Partial<Pick<ClaimRequest, 'classMaxRetries'>>;

/** A claim on its own: a settle with nothing to settle. */
export async function claimJobs(store: WorkerStore, request: TestClaim): Promise<ClaimedJob[]> {
  return (await store.jobsSettle({ settlements: [], claim: { classMaxRetries: DEFAULT_MAX_RETRIES, ...request } }))
    .claimed;
}

export async function extendLease(
  store: WorkerStore,
  params: LeaseRef & { leaseMs: number },
): Promise<{ leaseExpiresAt: number; cancelRequested: boolean }> {
  const [status] = await store.leasesExtend({ leases: [params], leaseMs: params.leaseMs });
  if (status === undefined || !status.held) throw new LeaseLostError(params.id, params.leaseToken, 'heartbeat');
  return { leaseExpiresAt: status.leaseExpiresAt, cancelRequested: status.cancelRequested };
}

export async function completeIfHeld(
  store: WorkerStore,
  params: LeaseRef & { result: string | null; cost?: AttemptCost },
): Promise<void> {
  await settleOrThrow(store, {
    id: params.id,
    leaseToken: params.leaseToken,
    startedAt: null,
    verdict: { type: 'complete', result: params.result },
    cost: params.cost,
  });
}

export async function failIfHeld(
  store: WorkerStore,
  params: LeaseRef & { error: FailureInput; retryDelayMs: number; cost?: AttemptCost },
): Promise<FailOutcome> {
  const verdict = { type: 'fail' as const, error: params.error, retryDelayMs: params.retryDelayMs };
  const settled = await settleOrThrow(store, {
    id: params.id,
    leaseToken: params.leaseToken,
    startedAt: null,
    verdict,
    cost: params.cost,
  });
  if (settled.status === 'QUEUED') return { status: 'QUEUED', runAt: settled.runAt ?? 0 };
  return { status: settled.status === 'CANCELLED' ? 'CANCELLED' : 'FAILED' };
}

export async function releaseIfHeld(store: WorkerStore, params: LeaseRef & { reason: string }): Promise<void> {
  await settleOrThrow(store, {
    id: params.id,
    leaseToken: params.leaseToken,
    startedAt: null,
    verdict: { type: 'release', reason: params.reason },
  });
}

async function settleOrThrow(
  store: WorkerStore,
  settlement: Settlement,
): Promise<Extract<SettleResult, { held: true }>> {
  const [result] = (await store.jobsSettle({ settlements: [settlement] })).settled;
  if (result === undefined || !result.held)
    throw new LeaseLostError(settlement.id, settlement.leaseToken, settlement.verdict.type);
  return result;
}
