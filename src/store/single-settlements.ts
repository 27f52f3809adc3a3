import { LeaseLostError } from '../errors.js';
import type { ClaimedJob, ClaimRequest, FailOutcome, FailureInput, LeaseRef, Settlement, SettleResult } from './types.js';

/**
 * The one-job fenced writes of the Store interface, for every driver: each is
 * a batch of one through the driver's jobsSettle, and a stale lease raises
 * LeaseLostError instead of being reported.
 */
export abstract class SingleSettlements {
  abstract jobsSettle(params: { settlements: Settlement[]; claim?: ClaimRequest }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }>;

  async jobCompleteIfHeld(params: LeaseRef & { result: string | null }): Promise<void> {
    await this.settleOrThrow({ id: params.id, leaseToken: params.leaseToken, startedAt: null, verdict: { type: 'complete', result: params.result } });
  }

  async jobFailIfHeld(params: LeaseRef & { error: FailureInput; retryDelayMs: number }): Promise<FailOutcome> {
    const verdict = { type: 'fail' as const, error: params.error, retryDelayMs: params.retryDelayMs };
    const settled = await this.settleOrThrow({ id: params.id, leaseToken: params.leaseToken, startedAt: null, verdict });
    if (settled.status === 'QUEUED') return { status: 'QUEUED', runAt: settled.runAt ?? 0 };
    return { status: settled.status === 'CANCELLED' ? 'CANCELLED' : 'FAILED' };
  }

  async jobReleaseIfHeld(params: LeaseRef & { reason: string }): Promise<void> {
    await this.settleOrThrow({ id: params.id, leaseToken: params.leaseToken, startedAt: null, verdict: { type: 'release', reason: params.reason } });
  }

  private async settleOrThrow(settlement: Settlement): Promise<Extract<SettleResult, { held: true }>> {
    const { settled } = await this.jobsSettle({ settlements: [settlement] });
    const [result] = settled;
    if (result === undefined || !result.held) throw new LeaseLostError(settlement.id, settlement.leaseToken, settlement.verdict.type);
    return result;
  }
}
