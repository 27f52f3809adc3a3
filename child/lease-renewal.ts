import { coerceError } from '../src/errors.js';
import type { LogLevel } from '../src/config/schema.js';
import type { LeaseRef, WorkerStore } from '../src/store/types.js';

export interface LeaseRenewalDeps {
  store: WorkerStore;
  leaseMs: number;
  intervalMs: number;
  log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** Every lease the child holds now: running, waiting its turn, or with an outcome not yet written. */
  held: () => LeaseRef[];
  /** The lease is gone (taken back, or the job was retried elsewhere). */
  onLost: (jobId: number) => void;
  /** An operator asked to cancel the job. */
  onCancelRequested: (jobId: number) => void;
}

/**
 * The child's heartbeat: one write renews every lease it holds, and the
 * answer tells it which leases are gone and which jobs an operator cancelled,
 * whether they run or wait.
 */
export class LeaseRenewal {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(private readonly deps: LeaseRenewalDeps) {}

  start(): void {
    this.timer ??= setInterval(() => void this.beat(), this.deps.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Renew now (a handler's ctx.heartbeat); a beat already in flight is shared. */
  beat(): Promise<void> {
    this.beating ??= this.renew().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async renew(): Promise<void> {
    const leases = this.deps.held();
    if (leases.length === 0) return;
    try {
      const statuses = await this.deps.store.leasesExtend({ leases, leaseMs: this.deps.leaseMs });
      for (const status of statuses) {
        if (!status.held) this.deps.onLost(status.id);
        else if (status.cancelRequested) this.deps.onCancelRequested(status.id);
      }
    } catch (error) {
      this.deps.log('warn', 'heartbeat failed; will try again', { err: coerceError(error) });
    }
  }
}
