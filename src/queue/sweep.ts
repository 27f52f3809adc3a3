import type { RecoveredJob, RetryDelay, MaintenanceStore } from '../store/types.js';

export interface SweepOptions {
  batchSize: number;
  retryDelay: RetryDelay;
  actor: string;
}

/** What a sweep's take-back ends an attempt with. */
export const LEASE_EXPIRED = { code: 'LEASE:EXPIRED', message: 'lease expired without a heartbeat' } as const;

/**
 * One sweep, the backstop of guarantee 4 (Nothing stays RUNNING): take back
 * the leases that ran out (their worker died with its supervisor, or went
 * silent), batch by batch until a batch comes back short. `leasehold sweep`
 * runs one; the supervisor one every `sweeper.interval_seconds`
 * (supervisor/sweeper.ts).
 */
export async function recoverExpiredLeases(store: MaintenanceStore, options: SweepOptions): Promise<RecoveredJob[]> {
  const recovered: RecoveredJob[] = [];
  for (;;) {
    const batch = await store.leasesRecoverExpired({
      limit: options.batchSize,
      errorCode: LEASE_EXPIRED.code,
      errorDetail: LEASE_EXPIRED.message,
      event: 'RECOVERED',
      actor: options.actor,
      retryDelay: options.retryDelay,
    });
    recovered.push(...batch);
    if (batch.length < options.batchSize) return recovered;
  }
}
