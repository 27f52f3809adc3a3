/**
 * The PostgreSQL driver's writes about held jobs' outcomes: the general path
 * (read and lock the facts, plan each outcome, write, record), the one
 * statement of a batch of successes, and the timeline appends they share.
 */
import { claimedJobs, EVENTS, liveFacts, ownEarlierSettlement, planSettlement, settleResult } from '../outcomes.js';
import type { ClaimedRow, EndedAttempt, HeldFacts, OutcomePlan, PlannedEvent } from '../outcomes.js';
import type { ClaimedJob, ClaimRequest, LeaseRef, Settlement, SettleResult } from '../types.js';
import { changes, rows, type Db } from './connection.js';
import { HISTORY_SQL } from './sql/history.js';
import { LEASE_SQL } from './sql/leases.js';
import { SETTLE_SQL } from './sql/settle.js';

export const leaseKey = (id: number, leaseToken: string) => `${id}:${leaseToken}`;

/** Append to the timeline, in order, in one statement. */
export async function record(db: Db, events: PlannedEvent[], statement = HISTORY_SQL.eventInsertMany): Promise<void> {
  if (events.length === 0) return;
  const column = <K extends keyof PlannedEvent>(key: K) => events.map((event) => event[key]);
  await changes(db, statement, [column('jobId'), column('ts'), column('event'), column('actor'), column('detail')]);
}

/** The other half of every fenced write: say in the timeline that stale holders were turned away (no event for a job that is gone). */
export async function recordZombies(db: Db, events: PlannedEvent[]): Promise<void> {
  await record(db, events, HISTORY_SQL.eventInsertIfJob);
}

/** Inside a transaction: settle, then claim (`claim`), then record the settlements' events. */
export async function settleThenClaim(
  db: Db,
  settlements: Settlement[],
  claim: (db: Db) => Promise<ClaimedJob[]> | ClaimedJob[],
  now: number,
): Promise<{ settled: SettleResult[]; claimed: ClaimedJob[] }> {
  const settled = await settle(db, settlements, now);
  const claimed = await claim(db);
  await record(db, settled.events);
  return { settled: settled.results, claimed };
}

/**
 * Inside a transaction: write each verdict, fenced by its lease. The held
 * rows are read and locked first, all at once in id order; a settlement
 * whose lease is not among them (or that repeats one already settled in
 * this batch) is a stale write: recorded, reported held: false.
 */
async function settle(db: Db, settlements: Settlement[], now: number): Promise<{ results: SettleResult[]; events: PlannedEvent[] }> {
  if (settlements.length === 0) return { results: [], events: [] };
  const bind = [settlements.map((s) => s.id), settlements.map((s) => s.leaseToken)];
  const held = new Map((await rows<HeldFacts>(db, LEASE_SQL.heldFactsMany, bind)).map((facts) => [leaseKey(facts.id, facts.lease_token), facts]));
  const plans: OutcomePlan[] = [];
  const stale: PlannedEvent[] = [];
  for (const [key, facts] of held) if (liveFacts(facts, now) === undefined) held.delete(key);
  const gone = settlements.filter((s) => !held.has(leaseKey(s.id, s.leaseToken)));
  const ended = gone.length === 0 ? new Map<string, EndedAttempt>() : await endedAttempts(db, gone);
  const results = settlements.map((settlement): SettleResult => {
    const key = leaseKey(settlement.id, settlement.leaseToken);
    const facts = held.get(key);
    if (facts === undefined) {
      const own = ownEarlierSettlement(settlement, ended.get(key));
      if (own !== undefined) return own;
      stale.push(EVENTS.zombie(settlement, now, settlement.verdict.type));
      return { id: settlement.id, held: false };
    }
    held.delete(key);
    const plan = planSettlement(settlement, facts, now);
    plans.push(plan);
    return settleResult(plan);
  });
  await writeOutcomes(db, plans, now);
  await recordZombies(db, stale);
  return { results, events: plans.flatMap((plan) => plan.events) };
}

/** The attempts these leases' tokens name, by lease: where a settlement sent again finds its own earlier write. */
async function endedAttempts(db: Db, refs: LeaseRef[]): Promise<Map<string, EndedAttempt>> {
  const found = await rows<EndedAttempt>(db, HISTORY_SQL.attemptsByToken, [refs.map((ref) => ref.id), refs.map((ref) => ref.leaseToken)]);
  return new Map(found.map((attempt) => [leaseKey(attempt.job_id, attempt.lease_token), attempt]));
}

/** Inside a transaction: run outcome plans and record their events; the caller read (and locked) their facts. */
export async function apply(db: Db, plans: OutcomePlan[], now: number): Promise<void> {
  await writeOutcomes(db, plans, now);
  await record(db, plans.flatMap((plan) => plan.events));
}

/** The fenced row writes of outcome plans: the successes in one statement, the rest one by one. */
async function writeOutcomes(db: Db, plans: OutcomePlan[], now: number): Promise<void> {
  const successes = plans.flatMap((plan) => (plan.job.type === 'complete' ? [{ plan, result: plan.job.result }] : []));
  if (successes.length > 0) {
    const column = <T>(pick: (plan: OutcomePlan) => T) => successes.map(({ plan }) => pick(plan));
    await changes(db, LEASE_SQL.completeMany, [
      column((p) => p.id),
      column((p) => p.leaseToken),
      column((p) => p.startedAt),
      column((p) => p.attempt),
      column((p) => p.attemptEnd.status),
      column((p) => p.attemptEnd.code),
      column((p) => p.attemptEnd.detail),
      successes.map(({ result }) => result),
      column((p) => p.attemptEnd.cpuMs),
      column((p) => p.attemptEnd.peakRssBytes),
      now,
    ]);
  }
  for (const plan of plans) {
    const { status, code, detail, cpuMs, peakRssBytes } = plan.attemptEnd;
    const shared = [plan.id, plan.leaseToken, plan.startedAt, now, plan.attempt, status, code, detail, cpuMs, peakRssBytes];
    const job = plan.job;
    switch (job.type) {
      case 'complete':
        break; // written above
      case 'requeue':
        await changes(db, LEASE_SQL.requeue, [...shared, job.runAt]);
        break;
      case 'finishBadly':
        await changes(db, LEASE_SQL.finishBadly, [...shared, job.status]);
        break;
      case 'release':
        await changes(db, LEASE_SQL.release, shared);
        break;
    }
  }
}

/**
 * A batch the one statement can write: successes only, each lease once, and
 * a claim (if any) that needs no rate-limit window (that one is counted and
 * locked in a transaction of its own steps).
 */
export function successesOnly(params: { settlements: Settlement[]; claim?: ClaimRequest }): boolean {
  if (params.claim?.rateLimit !== undefined || params.claim?.classes.length === 0) return false;
  const ids = new Set<number>();
  for (const s of params.settlements) {
    if (s.verdict.type !== 'complete' || ids.has(s.id)) return false;
    ids.add(s.id);
  }
  return params.settlements.length > 0 || params.claim !== undefined;
}

type BatchRow = ClaimedRow & { settled: boolean };

/**
 * A batch of successes and the next claim in one statement (SETTLE_SQL).
 * `written`: the leases whose success it wrote; every other settlement was
 * not held as the statement saw it, and is the caller's to look into.
 */
export async function settleSuccessesAtOnce(
  oneStatement: (work: (db: Db, now: number) => Promise<BatchRow[]>) => Promise<BatchRow[]>,
  settlements: Settlement[],
  claim: ClaimRequest | undefined,
): Promise<{ written: Set<string>; claimed: ClaimedJob[] }> {
  const found = await oneStatement((db, now) => {
    const column = <T>(pick: (s: Settlement) => T) => settlements.map(pick);
    const values: unknown[] = [
      column((s) => s.id),
      column((s) => s.leaseToken),
      column((s) => s.startedAt),
      column((s) => (s.verdict.type === 'complete' ? s.verdict.result : null)),
      column((s) => s.cost?.cpuMs ?? null),
      column((s) => s.cost?.peakRssBytes ?? null),
      now,
    ];
    if (claim === undefined) return rows<BatchRow>(db, SETTLE_SQL.successes, values);
    const [statement, classes] =
      claim.classes.length === 1 ? [SETTLE_SQL.successesThenClaimOneClass, claim.classes[0]] : [SETTLE_SQL.successesThenClaimManyClasses, claim.classes];
    return rows<BatchRow>(db, statement, [...values, classes, claim.ownerId, now + claim.leaseMs, claim.limit, claim.classMaxRetries]);
  });
  const written = new Set(found.filter((row) => row.settled).map((row) => leaseKey(row.id, row.lease_token)));
  return { written, claimed: claimedJobs(found.filter((row) => !row.settled)) };
}
