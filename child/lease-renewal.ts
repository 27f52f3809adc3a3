import { coerceError } from '../src/errors.js';
import type { LogLevel } from '../src/limits.js';
import { dbFaultOf } from '../src/store/faults.js';
import type { LeaseRef, WorkerStore } from '../src/store/types.js';

/** The one store call a heartbeat makes. */
export type RenewalStore = Pick<WorkerStore, 'leasesExtend' | 'clock'>;

export interface LeaseRenewalDeps {
  store: RenewalStore;
  leaseMs: number;
  intervalMs: number;
  log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void;
  /** Every lease the child holds now: running, waiting its turn, or with an outcome not yet written. */
  held: () => LeaseRef[];
  /** Runs the renewal in turn with the child's other writes about its leases (GroupCommit.inTurn). */
  inTurn: <T>(work: () => Promise<T>) => Promise<T>;
  /** The lease is gone (taken back, or the job was retried elsewhere). */
  onLost: (jobId: number) => void;
  /** The lease ran out by the store's clock before a renewal succeeded (the database is away or slow). */
  onExpired: (jobId: number) => void;
  /** An operator asked to cancel the job. */
  onCancelRequested: (jobId: number) => void;
  /** Runs at every tick of the heartbeat timer, before its renewal: the child's periodic tick. */
  onTick: () => void;
}

/**
 * The child's heartbeat: one write renews every lease it holds, and the
 * answer tells it which leases are gone and which jobs an operator cancelled,
 * whether they run or wait.
 *
 * It also keeps each lease's deadline: the expiry the claim or the last
 * renewal wrote, on the store's clock, which it is judged by here too. A lease
 * whose deadline passes before a renewal succeeds is given up (Kleppmann's
 * rule: the token protects the database, the deadline stops the handler's
 * side effects elsewhere).
 */
export class LeaseRenewal {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private readonly deadlines = new Map<number, number>();
  private deadlineTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: LeaseRenewalDeps) {}

  start(): void {
    this.timer ??= setInterval(() => {
      this.deps.onTick();
      void this.beat();
    }, this.deps.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.deadlines.clear();
  }

  /** A lease just taken, running out at `expiresAt`. */
  track(jobId: number, expiresAt: number): void {
    this.deadlines.set(jobId, expiresAt);
    this.armDeadline();
  }

  /** The job left our hands. */
  untrack(jobId: number): void {
    this.deadlines.delete(jobId);
  }

  /** Renew now (a handler's ctx.heartbeat); a beat already in flight is shared. */
  beat(): Promise<void> {
    this.beating ??= this.renew().finally(() => (this.beating = undefined));
    return this.beating;
  }

  private async renew(): Promise<void> {
    if (this.deps.held().length === 0) return;
    try {
      const statuses = await this.deps.inTurn(async () => {
        const leases = this.deps.held();
        return leases.length === 0 ? [] : this.deps.store.leasesExtend({ leases, leaseMs: this.deps.leaseMs });
      });
      for (const status of statuses) {
        if (!status.held) this.deps.onLost(status.id);
        else if (this.deadlines.has(status.id)) this.deadlines.set(status.id, status.leaseExpiresAt);
        if (status.held && status.cancelRequested) this.deps.onCancelRequested(status.id);
      }
    } catch (error) {
      // A database that is away is logged once, as an outage; the deadline decides what it costs.
      if (dbFaultOf(error) === undefined)
        this.deps.log('warn', 'heartbeat failed; will try again', { err: coerceError(error) });
    }
  }

  /** One timer, for the earliest deadline; it gives up every lease past its own. */
  private armDeadline(): void {
    if (this.deadlineTimer !== undefined || this.deadlines.size === 0) return;
    const earliest = Math.min(...this.deadlines.values());
    this.deadlineTimer = setTimeout(
      () => {
        this.deadlineTimer = undefined;
        const now = this.deps.store.clock.now();
        for (const [jobId, deadline] of this.deadlines) {
          if (deadline > now) continue;
          this.deadlines.delete(jobId);
          this.deps.onExpired(jobId);
        }
        this.armDeadline();
      },
      Math.max(0, earliest - this.deps.store.clock.now()),
    );
  }
}
