import type pg from 'pg';
import type { Clock } from '../../clock.js';
import { claimFacts, type ClaimFacts, type HeldFacts, type RecoveryFacts } from '../facts.js';
import {
  fenced,
  LOST,
  planOwnerRecovery,
  planRecovery,
  planRelease,
  recoveredJob,
  type OutcomePlan,
} from '../outcomes.js';
import { EVENTS } from '../timeline.js';
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
import { first, openPool, parsePostgresUrl, rows, type Db, type PostgresTarget } from './connection.js';
import { apply, leaseKey, settleBatch, type Runner } from './settlement.js';
import { refuseMissingQueue, runPostgresMigrations } from './migrations.js';
import { LEASE_SQL } from './sql/leases.js';
import { ServerClock } from './server-clock.js';
import { PostgresWrites } from './writes.js';

export interface PostgresStoreOptions {
  /** postgres:// or postgresql:// URL; `?schema=` and `?clock_skew_ms=` are read by leasehold. */
  database: string;
  /** Default: the server's clock (./server-clock.ts); a test may give its own. */
  clock?: Clock;
  /** The server's statement_timeout on every connection (default: DEFAULT_STATEMENT_TIMEOUT_SECONDS). */
  statementTimeoutMs?: number;
  /** false: a schema without leasehold's tables is refused, not given them (openStore's `create`). */
  create?: boolean;
}

/**
 * The PostgreSQL driver (its reads: reads.ts; the writes about no held job:
 * writes.ts), and here the lease protocol. READ COMMITTED transactions,
 * all short. Claims and sweeps pick rows with FOR NO KEY UPDATE SKIP LOCKED
 * (never waiting, never sharing a row); every outcome reads its facts with
 * FOR NO KEY UPDATE, where SQLite relies on its IMMEDIATE write lock, and
 * writes with the same (id, lease_token, status) compare-and-swap. Rows a
 * transaction locks several at a time are locked in id order, so heartbeats,
 * settlements and a supervisor's take-back never deadlock; a deadlock or
 * serialization failure the server reports anyway reruns the whole
 * transaction. NO KEY UPDATE (not UPDATE) locks leave the key alone:
 * inserting an event or attempt that references a locked job never waits.
 * A worker's hot writes (a batch of successes with the next claim, a start,
 * a heartbeat, a progress) are each one statement of data-modifying CTEs,
 * without BEGIN and COMMIT: a round trip each (settlement.ts, sql/settle.ts).
 * Times are the server's, kept on this host's monotonic clock between
 * readings (./server-clock.ts).
 */
export class PostgresStore extends PostgresWrites implements Store {
  readonly driver = 'postgres' as const;
  private closing: Promise<void> | undefined;

  private constructor(pool: pg.Pool, target: PostgresTarget, clock: Clock) {
    super(pool, target, clock);
  }

  /** Connect, create the schema if needed and migrate it. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const target = parsePostgresUrl(options.database, options.statementTimeoutMs);
    const pool = openPool(target);
    let clock = options.clock;
    try {
      await refuseMissingQueue(pool, target, options.database, options.create !== false);
      clock ??= await ServerClock.open(pool);
      await runPostgresMigrations(pool, target.schema, clock.now());
      return new PostgresStore(pool, target, clock);
    } catch (error) {
      if (clock instanceof ServerClock) clock.close();
      await pool.end();
      throw error;
    }
  }

  async migrate(): Promise<void> {
    await runPostgresMigrations(this.pool, this.target.schema, this.clock.now());
  }

  /** Safe twice; waits for the queries in flight and ends the subscriptions. */
  async close(): Promise<void> {
    if (this.clock instanceof ServerClock) this.clock.close();
    this.closing ??= Promise.allSettled([...this.listening].map((stop) => stop())).then(() => this.pool.end());
    await this.closing;
  }

  private readonly runner: Runner = {
    write: (work) => this.write(work),
    oneStatement: (work) => this.oneStatement(work),
  };

  // workers

  /** The start and its STARTED event, or the zombie's record, in one statement (after a read of the claim's facts when the caller has no record of them). */
  async jobStart(params: JobStartParams): Promise<void> {
    const facts = params.claim === undefined ? await this.claimFacts(params) : claimFacts(params, params.claim);
    const started = await this.oneStatement((db, now) => {
      const startedAt = params.startedAt ?? now;
      // No facts: the token is not the job's, and the statement only records the zombie.
      const event = facts === undefined ? null : EVENTS.started(facts, startedAt).detail;
      return rows(db, LEASE_SQL.start, [
        params.id,
        params.leaseToken,
        startedAt,
        now,
        now + params.leaseMs,
        event,
        EVENTS.zombie(params, now, 'start').detail,
      ]);
    });
    fenced(params, 'start', started.length === 1 ? undefined : LOST);
  }

  /** What the claim a token names fixed: it never changes while the token is the job's, so no lock is needed. */
  private async claimFacts(ref: LeaseRef): Promise<ClaimFacts | undefined> {
    return first<ClaimFacts>(this.pool, LEASE_SQL.claimFacts, [ref.id, ref.leaseToken]);
  }

  /** Every renewal, and the zombie's record of every lease lost, in one statement. */
  async leasesExtend(params: { leases: LeaseRef[]; leaseMs: number }): Promise<LeaseStatus[]> {
    if (params.leases.length === 0) return [];
    type Renewed = { id: number; lease_token: string; lease_expires_at: number; cancel_requested_at: number | null };
    const found = await this.oneStatement((db, now) => {
      const zombies = params.leases.map((ref) => EVENTS.zombie(ref, now, 'heartbeat').detail);
      const bind = [
        params.leases.map((ref) => ref.id),
        params.leases.map((ref) => ref.leaseToken),
        now,
        now + params.leaseMs,
        zombies,
      ];
      return rows<Renewed>(db, LEASE_SQL.extendMany, bind);
    });
    const renewed = new Map(found.map((row) => [leaseKey(row.id, row.lease_token), row]));
    return params.leases.map((ref): LeaseStatus => {
      const row = renewed.get(leaseKey(ref.id, ref.leaseToken));
      if (row === undefined) return { id: ref.id, held: false };
      return {
        id: ref.id,
        held: true,
        leaseExpiresAt: row.lease_expires_at,
        cancelRequested: row.cancel_requested_at !== null,
      };
    });
  }

  async jobProgress(params: LeaseRef & { progress: string }): Promise<void> {
    const written = await this.oneStatement((db, now) =>
      rows(db, LEASE_SQL.progress, [
        params.id,
        params.leaseToken,
        params.progress,
        now,
        EVENTS.zombie(params, now, 'progress').detail,
      ]),
    );
    fenced(params, 'progress', written.length === 1 ? undefined : LOST);
  }

  async jobsSettle(params: {
    settlements: Settlement[];
    claim?: ClaimRequest;
  }): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
    return settleBatch(this.runner, params);
  }

  // the sweeper and the supervisor

  /** Leases that ran out more than clockSkewMs ago; several sweepers at once each take different jobs. */
  async leasesRecoverExpired(params: RecoverParams & { limit: number }): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const expired = await rows<RecoveryFacts>(db, LEASE_SQL.expired, [now - this.target.clockSkewMs, params.limit]);
      return this.recoverRows(db, expired, (row) => planRecovery(row, params, now), now);
    });
  }

  async leasesRecoverByOwner(params: OwnerRecovery): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const held = await rows<RecoveryFacts>(db, LEASE_SQL.heldByOwner, [params.ownerId]);
      return this.recoverRows(db, held, (row) => planOwnerRecovery(row, params, now), now);
    });
  }

  async leasesReleaseByOwner(params: { ownerId: string; actor: string; reason: string }): Promise<RecoveredJob[]> {
    return this.write(async (db, now) => {
      const held = await rows<RecoveryFacts>(db, LEASE_SQL.heldByOwner, [params.ownerId]);
      return this.recoverRows(db, held, (row) => planRelease(row, now, params.actor, params.reason), now);
    });
  }

  /** Inside a transaction: take back locked held rows, each as `plan` says. */
  private async recoverRows(
    db: Db,
    held: RecoveryFacts[],
    plan: (row: HeldFacts) => OutcomePlan,
    now: number,
  ): Promise<RecoveredJob[]> {
    const plans = held.map(plan);
    await apply(db, plans, now);
    return held.map((row, index) => recoveredJob(row, plans[index]!));
  }
}
