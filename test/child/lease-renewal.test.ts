/**
 * The child's local lease deadline (pure logic, fake timers): a lease whose
 * renewals fail is given up at the expiry its claim wrote, not before; a
 * renewal that succeeds moves the deadline to the expiry it wrote; a job that
 * left our hands is never given up. The real-process side (a stopped
 * PostgreSQL) is in test/faults/.
 */
import { systemClock } from '../../src/clock.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaseRenewal } from '../../child/lease-renewal.js';
import type { LeaseRef, LeaseStatus, WorkerStore } from '../../src/store/types.js';

const LEASE_MS = 3_000;
const BEAT_MS = 1_000;

function renewal(extend: (leases: LeaseRef[]) => Promise<LeaseStatus[]>) {
  const expired: number[] = [];
  const logged: string[] = [];
  const held: LeaseRef[] = [];
  const leases = new LeaseRenewal({
    store: {
      leasesExtend: async ({ leases: refs }: { leases: LeaseRef[] }) => extend(refs),
      clock: systemClock,
    } as unknown as WorkerStore,
    leaseMs: LEASE_MS,
    intervalMs: BEAT_MS,
    log: (_level, msg) => logged.push(msg),
    held: () => held,
    inTurn: (work) => work(),
    onLost: () => undefined,
    onExpired: (jobId) => expired.push(jobId),
    onCancelRequested: () => undefined,
    onTick: () => undefined,
  });
  const take = (id: number) => {
    held.push({ id, leaseToken: `t${id}` });
    leases.track(id, Date.now() + LEASE_MS);
  };
  return { leases, expired, logged, take };
}

const connectionLost = async (): Promise<LeaseStatus[]> => {
  throw new Error('Connection terminated unexpectedly');
};

describe('LeaseRenewal: the local deadline', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('gives up a lease whose renewals fail at the expiry its claim wrote, and logs no failed heartbeat', async () => {
    const { leases, expired, logged, take } = renewal(connectionLost);
    leases.start();
    take(7);
    await vi.advanceTimersByTimeAsync(LEASE_MS - 1);
    expect(expired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(expired).toEqual([7]);
    await vi.advanceTimersByTimeAsync(LEASE_MS * 3);
    expect(expired).toEqual([7]);
    expect(logged).toEqual([]);
    leases.stop();
  });

  it('moves the deadline to the expiry each renewal that succeeds wrote', async () => {
    let up = true;
    const { leases, expired, take } = renewal(async (refs) => {
      if (!up) return connectionLost();
      return refs.map((ref) => ({
        id: ref.id,
        held: true as const,
        leaseExpiresAt: Date.now() + LEASE_MS,
        cancelRequested: false,
      }));
    });
    const startedAt = Date.now();
    leases.start();
    take(1);
    await vi.advanceTimersByTimeAsync(LEASE_MS * 4);
    expect(expired).toEqual([]);
    up = false;
    const lastRenewal = startedAt + Math.floor((Date.now() - startedAt) / BEAT_MS) * BEAT_MS;
    await vi.advanceTimersByTimeAsync(lastRenewal + LEASE_MS - Date.now() - 1);
    expect(expired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(expired).toEqual([1]);
    leases.stop();
  });

  it('never gives up a job that left our hands', async () => {
    const { leases, expired, take } = renewal(connectionLost);
    take(3);
    leases.untrack(3);
    await vi.advanceTimersByTimeAsync(LEASE_MS * 2);
    expect(expired).toEqual([]);
    leases.stop();
  });
});
