import { systemClock } from '../../../src/clock.js';
import type { RunLoopStore } from '../../../child/run-loop.js';
import { LeaseLostError } from '../../../src/errors.js';
import type {
  ClaimedJob,
  ClaimRequest,
  LeaseRef,
  LeaseStatus,
  RelatedJob,
  Settlement,
  SettleResult,
} from '../../../src/store/types.js';

/**
 * The four store calls a child's loop makes, in memory: a queue of jobs to
 * claim, what was settled, and leases a test can take away or mark for
 * cancel. Its rules are the store's contract in brief: a settlement or a
 * start is fenced by the lease, a lost lease is reported, never thrown by a
 * batch.
 */
export class FakeWorkerStore implements RunLoopStore {
  readonly claims: ClaimRequest[] = [];
  readonly clock = systemClock;
  readonly settled: Settlement[] = [];
  readonly starts: number[] = [];
  /** Leases taken back (by a sweeper, or an operator's retry). */
  readonly lost = new Set<number>();
  readonly cancelRequested = new Set<number>();
  /** Jobs to claim: a claim adds its owner, time and lease. */
  private readonly ready: Omit<ClaimedJob, 'ownerId' | 'claimedAt'>[] = [];
  private nextId = 1;

  /** Jobs ready to claim, one per payload, in claim order; returns their ids. */
  enqueue(...payloads: unknown[]): number[] {
    return payloads.map((payload) => {
      const id = this.nextId++;
      this.ready.push({
        id,
        class: 'unit',
        payload: JSON.stringify(payload),
        priority: 0,
        attempt: 1,
        maxRetries: 3,
        leaseToken: `token-${id}`,
        traceparent: null,
        leaseExpiresAt: 0,
        createdAt: Date.now(),
      });
      return id;
    });
  }

  /** The verdict each job was settled with, by id. */
  verdicts(): Map<number, Settlement['verdict']> {
    return new Map(this.settled.map((settlement) => [settlement.id, settlement.verdict]));
  }

  async jobsSettle({
    settlements,
    claim,
  }: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    const settled = settlements.map((settlement): SettleResult => {
      if (this.lost.has(settlement.id)) return { id: settlement.id, held: false };
      this.settled.push(settlement);
      return { id: settlement.id, held: true, ...statusOf(settlement.verdict) };
    });
    if (claim === undefined) return { settled, claimed: [] };
    this.claims.push(claim);
    const claimed = this.ready.splice(0, claim.limit).map((job) => ({
      ...job,
      ownerId: claim.ownerId,
      claimedAt: Date.now(),
      leaseExpiresAt: Date.now() + claim.leaseMs,
    }));
    return { settled, claimed };
  }

  async jobStart({ id, leaseToken }: LeaseRef & { leaseMs: number; startedAt?: number }): Promise<void> {
    if (this.lost.has(id)) throw new LeaseLostError(id, leaseToken, 'start');
    this.starts.push(id);
  }

  async leasesExtend({ leases, leaseMs }: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    return leases.map(({ id }) =>
      this.lost.has(id)
        ? { id, held: false }
        : { id, held: true, leaseExpiresAt: Date.now() + leaseMs, cancelRequested: this.cancelRequested.has(id) },
    );
  }

  async jobParents(): Promise<RelatedJob[]> {
    return [];
  }

  async jobProgress({ id, leaseToken }: LeaseRef & { progress: string }): Promise<void> {
    if (this.lost.has(id)) throw new LeaseLostError(id, leaseToken, 'progress');
  }
}

function statusOf(verdict: Settlement['verdict']): {
  status: 'SUCCEEDED' | 'QUEUED' | 'FAILED' | 'CANCELLED';
  runAt: number | null;
} {
  if (verdict.type === 'complete') return { status: 'SUCCEEDED', runAt: null };
  if (verdict.type === 'release') return { status: 'QUEUED', runAt: null };
  if (verdict.error.code === 'CANCELLED:BY_OPERATOR') return { status: 'CANCELLED', runAt: null };
  return verdict.error.retryable
    ? { status: 'QUEUED', runAt: Date.now() + verdict.retryDelayMs }
    : { status: 'FAILED', runAt: null };
}
