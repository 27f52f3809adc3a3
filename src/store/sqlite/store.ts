import type { Clock } from '../../clock.js';
import { FileClock } from './file-clock.js';
import {
  claimedJobs,
  liveFacts,
  type ClaimedRow,
  type ClaimFacts,
  type HeldFacts,
  type RecoveryFacts,
} from '../facts.js';
import {
  fenced,
  LOST,
  ownEarlierSettlement,
  planBlindSuccess,
  planOwnerRecovery,
  planRecovery,
  planRelease,
  planSettlement,
  recoveredJob,
  settleResult,
  endedJob,
  type BlindSettlement,
  type EndedAttempt,
  type OutcomePlan,
} from '../outcomes.js';
import { EVENTS } from '../timeline.js';
import { allowance, prunePlan, rateLimitedClass, windowStart } from '../rate-limit.js';
import type {
  ClaimedJob,
  ClaimRequest,
  JobStartParams,
  LeaseRef,
  LeaseStatus,
  OwnerRecovery,
  RecoveredJob,
  RecoverParams,
  Settlement,
  SettleResult,
  Store,
} from '../types.js';
import { jobLogRows } from '../job-logs.js';
import { openSqlite, withBusyRetry, type SqliteDb } from './connection.js';
import { fileHoldsQueue, runSqliteMigrations } from './migrations.js';
import { noQueueError } from '../no-queue.js';
import { MultiRowInserter } from './multi-row.js';
import { HISTORY_INSERTS } from './sql/history.js';
import { SqliteWrites } from './writes.js';

export interface SqliteStoreOptions {
  path: string;
  /** false: a file without leasehold's tables is refused, not given them (openStore's `create`). */
  create?: boolean;
  /** Default: the file's timeline (./file-clock.ts); a test may give its own. */
  clock?: Clock;
}

/**
 * The SQLite driver: its reads (reads.ts), its way of writing and the writes
 * about no held job (writes.ts), and here the lease protocol: claims, starts,
 * heartbeats, progress, settlements and take-backs, each fenced by the lease.
 */
export class SqliteStore extends SqliteWrites implements Store {
  readonly driver = 'sqlite' as const;
  private readonly attemptRows: MultiRowInserter;
  private readonly logRows: MultiRowInserter;

  private constructor(db: SqliteDb, clock: Clock) {
    super(db, clock);
    this.attemptRows = new MultiRowInserter(db, HISTORY_INSERTS.attempts);
    this.logRows = new MultiRowInserter(db, HISTORY_INSERTS.logs);
  }

  /** Open (creating the file and folder if needed) and migrate; each statement is prepared on its first use (prepareAll). */
  static async open(options: SqliteStoreOptions): Promise<SqliteStore> {
    // Looked at read-only first: opening for writes would make a missing file and switch a file to WAL mode.
    if (options.create === false && !fileHoldsQueue(options.path)) throw noQueueError(options.path);
    const db = openSqlite(options.path);
    try {
      // When a migration ran is this host's wall time: the file's timeline is in a table the migrations make.
      await withBusyRetry(() => runSqliteMigrations(db, options.clock?.now() ?? Date.now()));
      const clock = options.clock ?? (await withBusyRetry(() => FileClock.open(db)));
      return new SqliteStore(db, clock);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async migrate(): Promise<void> {
    await withBusyRetry(() => runSqliteMigrations(this.db, this.clock.now()));
  }

  /** Moves the file's timeline one bounded step towards this host's wall clock (the supervisor's clock watch, every minute). */
  async clockFollowWall(): Promise<void> {
    const clock = this.clock;
    if (clock instanceof FileClock) await this.write(() => clock.followWall());
  }

  async close(): Promise<void> {
    if (this.clock instanceof FileClock) this.clock.close();
    if (this.db.open) this.db.close();
  }

  /** The other half of every fenced write: say in the timeline that a stale holder was turned away. */
  private rejectZombie(ref: LeaseRef, now: number, operation: string): typeof LOST {
    if (this.jobs.exists.get(ref.id) !== undefined) this.record(EVENTS.zombie(ref, now, operation));
    return LOST;
  }

  // workers

  /**
   * Inside a transaction: claim up to `limit` due jobs, each with its own token
   * and attempt row (its start will carry the claim). A rate-limited claim
   * takes what its window has left; SQLite's one writer serializes it.
   */
  private claim(params: ClaimRequest, now: number): ClaimedJob[] {
    const { rateLimit } = params;
    const jobClass = rateLimit === undefined ? undefined : rateLimitedClass(params);
    const limit =
      rateLimit === undefined
        ? params.limit
        : allowance(
            params.limit,
            rateLimit,
            (this.classes.startsSince.get({ class: jobClass, since: windowStart(now, rateLimit) }) as { count: number })
              .count,
          );
    if (params.classes.length === 0 || limit < 1) return [];
    const bind = {
      ownerId: params.ownerId,
      now,
      leaseExpiresAt: now + params.leaseMs,
      limit,
      classMaxRetries: params.classMaxRetries,
    };
    const rows = (
      params.classes.length === 1
        ? this.leases.claimOneClass.all({ ...bind, class: params.classes[0] })
        : this.leases.claimManyClasses.all({ ...bind, classes: JSON.stringify(params.classes) })
    ) as ClaimedRow[];
    this.attemptRows.run(rows.map((row) => [row.id, row.attempts, params.ownerId, row.lease_token, now]));
    if (rateLimit !== undefined && rows.length > 0) {
      this.classes.startsAdd.run({ class: jobClass, now, count: rows.length });
      this.classes.startsPrune.run({ class: jobClass, ...prunePlan(now, rateLimit, rows.length) });
    }
    return claimedJobs(rows, params.ownerId, now);
  }

  /** A read: whether a claim of these classes would take a job now (a hint: a child of the writer looks before it asks it to claim). */
  async jobsDue(params: { classes: string[] }): Promise<boolean> {
    return this.anyDue(params.classes);
  }

  /** Whether a claim of these classes would take a job now; when the read fails, the claim is made to find out (and report the fault). */
  private anyDue(classes: string[]): boolean {
    const now = this.clock.now();
    try {
      const due =
        classes.length === 1
          ? this.leases.dueOneClass.get({ class: classes[0], now })
          : this.leases.dueManyClasses.get({ classes: JSON.stringify(classes), now });
      return due !== undefined;
    } catch {
      return true;
    }
  }

  async jobStart(params: JobStartParams): Promise<void> {
    const outcome = await this.write((now) => {
      const startedAt = params.startedAt ?? now;
      const row = this.leases.start.get({ ...params, startedAt, now, leaseExpiresAt: now + params.leaseMs }) as
        ClaimFacts | undefined;
      if (row === undefined) return this.rejectZombie(params, now, 'start');
      this.record(EVENTS.started(row, startedAt));
      return undefined;
    });
    fenced(params, 'start', outcome);
  }

  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    if (params.leases.length === 0) return [];
    return this.write((now) =>
      params.leases.map((ref): LeaseStatus => {
        const row = this.leases.extend.get({ ...ref, now, leaseExpiresAt: now + params.leaseMs }) as
          { lease_expires_at: number; cancel_requested_at: number | null } | undefined;
        if (row === undefined) {
          this.rejectZombie(ref, now, 'heartbeat');
          return { id: ref.id, held: false };
        }
        return {
          id: ref.id,
          held: true,
          leaseExpiresAt: row.lease_expires_at,
          cancelRequested: row.cancel_requested_at !== null,
        };
      }),
    );
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const outcome = await this.write((now) =>
      this.leases.progress.run(params).changes === 1 ? undefined : this.rejectZombie(params, now, 'progress'),
    );
    fenced(params, 'progress', outcome);
  }

  async jobsSettle(params: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    // An idle worker is woken by any commit: it looks before it takes the write lock from those who have work to write.
    if (params.settlements.length === 0 && params.claim !== undefined && !this.anyDue(params.claim.classes))
      return { settled: [], claimed: [] };
    return this.write((now) => ({
      settled: params.settlements.map((settlement) => this.settleHeld(settlement, now) ?? this.settle(settlement, now)),
      claimed: params.claim === undefined ? [] : this.claim(params.claim, now),
    }));
  }

  /**
   * Inside a transaction: a success whose holder passed its claim record,
   * planned from that record and written by one fenced UPDATE instead of a
   * read and a write (the read was a sixth of a no-op job's store time).
   * Undefined: the row is not as its holder knows it; the general way decides.
   */
  private settleHeld(settlement: Settlement, now: number): SettleResult | undefined {
    if (settlement.verdict.type !== 'complete' || settlement.claim === undefined) return undefined;
    const { plan, trail } = planBlindSuccess(settlement as BlindSettlement, now);
    // A holder that wrote the start passes no startedAt: the row is RUNNING, and its trail is written.
    const heldAs = settlement.startedAt === null ? 'RUNNING' : 'CLAIMED';
    const { result } = settlement.verdict;
    const written = this.leases.completeHeld.run(result, now, plan.startedAt, plan.id, plan.leaseToken, heldAs, now);
    if (written.changes === 0) return undefined;
    if (heldAs === 'CLAIMED') for (const event of trail) this.record(event);
    this.writeHistory(plan, now);
    return settleResult(plan);
  }

  /** Inside a transaction: write one verdict, fenced by the lease (the plan's rules live in ../outcomes.ts). */
  private settle(settlement: Settlement, now: number): SettleResult {
    const facts = liveFacts(
      this.leases.heldFacts.get({ id: settlement.id, leaseToken: settlement.leaseToken }) as HeldFacts | undefined,
      now,
    );
    if (facts === undefined) {
      const ended = this.history.attemptByToken.get({ jobId: settlement.id, leaseToken: settlement.leaseToken }) as
        EndedAttempt | undefined;
      const own = ownEarlierSettlement(settlement, ended);
      if (own !== undefined) return own;
      this.rejectZombie(settlement, now, settlement.verdict.type);
      return { id: settlement.id, held: false };
    }
    const plan = planSettlement(settlement, facts, now);
    this.apply(plan, now);
    return settleResult(plan);
  }

  /** Inside a transaction: run an outcome plan with the fenced statements; the caller read its facts under the lease. */
  private apply(plan: OutcomePlan, now: number): void {
    const ref = { id: plan.id, leaseToken: plan.leaseToken, startedAt: plan.startedAt, now };
    const job = plan.job;
    switch (job.type) {
      case 'complete':
        this.leases.complete.run({ ...ref, result: job.result });
        break;
      case 'requeue':
        this.leases.requeue.run({ ...ref, runAt: job.runAt, code: job.code, detail: job.detail });
        break;
      case 'finishBadly':
        this.leases.finishBadly.run({ ...ref, status: job.status, code: job.code, detail: job.detail });
        break;
      case 'release':
        this.leases.release.run(ref);
        break;
    }
    this.writeHistory(plan, now);
  }

  /** Inside a transaction: what an outcome writes besides its job row: the attempt's end, its log lines, its events. */
  private writeHistory(plan: OutcomePlan, now: number): void {
    const end = plan.attemptEnd;
    this.history.attemptFinish.run(
      end.status,
      now,
      end.code,
      end.detail,
      end.stack,
      end.cpuMs,
      end.peakRssBytes,
      plan.id,
      plan.attempt,
      plan.leaseToken,
    );
    if (plan.logs !== undefined)
      this.logRows.run(
        jobLogRows(plan.id, plan.attempt, plan.logs).map((r) => [
          r.job_id,
          r.attempt,
          r.seq,
          r.ts,
          r.level,
          r.message,
          r.fields,
        ]),
      );
    for (const event of plan.events) this.record(event);
    const ended = endedJob(plan);
    if (ended !== undefined) this.ended([ended], now);
  }

  // the sweeper and the supervisor

  async leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(
        this.leases.expired.all({ now, limit: params.limit }) as RecoveryFacts[],
        (row) => planRecovery(row, params, now),
        now,
      ),
    );
  }

  async leasesRecoverByOwner(params: OwnerRecovery): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(
        this.leases.heldByOwner.all({ ownerId: params.ownerId }) as RecoveryFacts[],
        (row) => planOwnerRecovery(row, params, now),
        now,
      ),
    );
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write((now) =>
      this.recoverRows(
        this.leases.heldByOwner.all({ ownerId: params.ownerId }) as RecoveryFacts[],
        (row) => planRelease(row, now, params.actor, params.reason),
        now,
      ),
    );
  }

  /** Inside a transaction: take back held rows, each as `plan` says. */
  private recoverRows(rows: RecoveryFacts[], plan: (row: HeldFacts) => OutcomePlan, now: number): RecoveredJob[] {
    return rows.map((row) => {
      const planned = plan(row);
      this.apply(planned, now);
      return recoveredJob(row, planned);
    });
  }
}
