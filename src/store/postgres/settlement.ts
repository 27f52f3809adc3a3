/**
 * The PostgreSQL driver's writes about held jobs' outcomes: a worker's batch
 * (a batch of successes and the next claim in one statement, or the general
 * path: read and lock the facts, plan each outcome, write), and the writes of
 * plans that the sweeper and the supervisor share. outcomes.ts decides every
 * row; the statements here only apply them, fenced.
 */
import { claimedJobs, type ClaimedRow, type HeldFacts, liveFacts } from '../facts.js';
import {
  type AttemptEnd,
  type BlindSettlement,
  type BlindSuccess,
  type EndedAttempt,
  type OutcomePlan,
  ownEarlierSettlement,
  planBlindSuccess,
  planSettlement,
  settleResult,
} from '../outcomes.js';
import { EVENTS, type PlannedEvent } from '../timeline.js';
import type { ClaimedJob, ClaimRequest, JobLogRow, LeaseRef, Settlement, SettleResult } from '../types.js';
import { jobLogRows } from '../job-logs.js';
import { claim } from './claims.js';
import { changes, rows, type Db } from './connection.js';
import { HISTORY_SQL } from './sql/history.js';
import { LEASE_SQL } from './sql/leases.js';
import { SETTLE_SQL } from './sql/settle.js';

export const leaseKey = (id: number, leaseToken: string) => `${id}:${leaseToken}`;

/** How the store runs work: in a transaction, or as one statement without BEGIN and COMMIT. */
export interface Runner {
  write<T>(work: (db: Db, now: number) => Promise<T>): Promise<T>;
  oneStatement<T>(work: (db: Db, now: number) => Promise<T>): Promise<T>;
}

type Batch = { settlements: Settlement[]; claim?: ClaimRequest };
type Settled = { settled: SettleResult[]; claimed: ClaimedJob[] };

/**
 * A worker's batch. Successes whose holder passed its claim record, each
 * lease once, with a claim that needs no rate-limit window, go in one
 * statement; what that statement did not find held, and every other batch,
 * the general way.
 */
export async function settleBatch(runner: Runner, batch: Batch): Promise<Settled> {
  const blind = blindSuccesses(batch);
  if (blind === undefined) {
    return runner.write(async (db, now) => {
      const settled = await settle(db, batch.settlements, now);
      return { settled, claimed: batch.claim === undefined ? [] : await claim(db, batch.claim, now) };
    });
  }
  const { written, claimed } = await runner.oneStatement(async (db, now) => writeBlind(db, blind, batch.claim, now));
  const rest = batch.settlements.filter((s) => !written.has(s));
  const restResults = rest.length === 0 ? [] : await runner.write((db, now) => settle(db, rest, now));
  const results = new Map(rest.map((s, index) => [s, restResults[index]!]));
  return { settled: batch.settlements.map((s) => results.get(s) ?? written.get(s)!), claimed };
}

/** The settlements the one statement can write, each with its claim record; undefined when the batch is not such. */
function blindSuccesses(batch: Batch): BlindSettlement[] | undefined {
  if (batch.claim?.rateLimit !== undefined || batch.claim?.classes.length === 0) return undefined;
  if (batch.settlements.length === 0 && batch.claim === undefined) return undefined;
  const ids = new Set<number>();
  for (const s of batch.settlements) {
    // Logs go in the general path's transaction, with their outcome.
    if (s.verdict.type !== 'complete' || s.claim === undefined || s.logs !== undefined || ids.has(s.id))
      return undefined;
    ids.add(s.id);
  }
  return batch.settlements as BlindSettlement[];
}

type BatchRow = ClaimedRow & { settled: boolean };

/** The one statement: planned successes, then the claim. `written`: each settlement it wrote, with its result. */
async function writeBlind(db: Db, settlements: BlindSettlement[], request: ClaimRequest | undefined, now: number) {
  const planned = settlements.map((s) => planBlindSuccess(s, now));
  const values = successValues(planned, now);
  let found: BatchRow[];
  if (request === undefined) found = await rows<BatchRow>(db, SETTLE_SQL.successes, values);
  else {
    const [statement, classes] =
      request.classes.length === 1
        ? [SETTLE_SQL.successesThenClaimOneClass, request.classes[0]]
        : [SETTLE_SQL.successesThenClaimManyClasses, request.classes];
    found = await rows<BatchRow>(db, statement, [
      ...values,
      classes,
      request.ownerId,
      now + request.leaseMs,
      request.limit,
      request.classMaxRetries,
    ]);
  }
  // Ids are unique in such a batch, and the statement wrote only the rows its tokens still held.
  const settledIds = new Set<number>();
  for (const row of found) if (row.settled) settledIds.add(row.id);
  const written = new Map<Settlement, SettleResult>();
  settlements.forEach((s, index) => settledIds.has(s.id) && written.set(s, settleResult(planned[index]!.plan)));
  const claimed =
    request === undefined
      ? []
      : claimedJobs(
          found.filter((row) => !row.settled),
          request.ownerId,
          now,
        );
  return { written, claimed };
}

/**
 * SETTLE_SQL's eleven parameters: the planned rows of each success, then
 * their timeline rows (the trail flagged) as one JSON document, which the
 * server reads faster than the driver escapes text arrays.
 */
function successValues(planned: BlindSuccess[], now: number): unknown[] {
  const column = (): unknown[] => [];
  const [ids, tokens, starts, results, statuses, codes, details, cpu, rss] = [
    column(),
    column(),
    column(),
    column(),
    column(),
    column(),
    column(),
    column(),
    column(),
  ];
  const timeline: TimelineRow[] = [];
  for (const { plan, trail } of planned) {
    const end = plan.attemptEnd;
    ids.push(plan.id);
    tokens.push(plan.leaseToken);
    starts.push(plan.startedAt);
    results.push(plan.job.type === 'complete' ? plan.job.result : null);
    statuses.push(end.status);
    codes.push(end.code);
    details.push(end.detail);
    cpu.push(end.cpuMs);
    rss.push(end.peakRssBytes);
    for (const event of trail) timeline.push(timelineRow(event, true));
    for (const event of plan.events) timeline.push(timelineRow(event, false));
  }
  return [ids, tokens, starts, results, statuses, codes, details, cpu, rss, now, JSON.stringify(timeline)];
}

interface TimelineRow {
  job_id: number;
  ts: number;
  event: string;
  actor: string;
  detail: string;
  trail: boolean;
}

function timelineRow(event: PlannedEvent, trail: boolean): TimelineRow {
  return { job_id: event.jobId, ts: event.ts, event: event.event, actor: event.actor, detail: event.detail, trail };
}

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

/**
 * Inside a transaction: write each verdict, fenced by its lease. The held
 * rows are read and locked first, all at once in id order; a settlement
 * whose lease is not among them (or that repeats one already settled in
 * this batch) is a stale write: recorded, reported held: false.
 */
async function settle(db: Db, settlements: Settlement[], now: number): Promise<SettleResult[]> {
  if (settlements.length === 0) return [];
  const bind = [settlements.map((s) => s.id), settlements.map((s) => s.leaseToken)];
  const held = new Map(
    (await rows<HeldFacts>(db, LEASE_SQL.heldFactsMany, bind)).map((facts) => [
      leaseKey(facts.id, facts.lease_token),
      facts,
    ]),
  );
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
  await apply(db, plans, now);
  await recordZombies(db, stale);
  return results;
}

/** The attempts these leases' tokens name, by lease: where a settlement sent again finds its own earlier write. */
async function endedAttempts(db: Db, refs: LeaseRef[]): Promise<Map<string, EndedAttempt>> {
  const found = await rows<EndedAttempt>(db, HISTORY_SQL.attemptsByToken, [
    refs.map((ref) => ref.id),
    refs.map((ref) => ref.leaseToken),
  ]);
  return new Map(found.map((attempt) => [leaseKey(attempt.job_id, attempt.lease_token), attempt]));
}

/**
 * Inside a transaction: write outcome plans whose facts the caller read and
 * locked, and their timeline: the successes in SETTLE_SQL's one statement
 * (their trail already decided from the facts), the rest in another.
 */
export async function apply(db: Db, plans: OutcomePlan[], now: number): Promise<void> {
  const successes = plans.filter((plan) => plan.job.type === 'complete');
  if (successes.length > 0)
    await changes(
      db,
      SETTLE_SQL.successes,
      successValues(
        successes.map((plan) => ({ plan, trail: [] })),
        now,
      ),
    );
  const others = plans.filter((plan) => plan.job.type !== 'complete');
  if (others.length > 0) await changes(db, LEASE_SQL.outcomes, outcomeValues(others, now));
  await recordLogs(db, plans);
}

/** LEASE_SQL.outcomes' nineteen parameters: a column per field of the plans, then their timeline rows. */
function outcomeValues(plans: OutcomePlan[], now: number): unknown[] {
  const column = (of: (plan: OutcomePlan) => unknown) => plans.map(of);
  const end = (key: keyof AttemptEnd) => column((plan) => plan.attemptEnd[key]);
  const events = plans.flatMap((plan) => plan.events);
  const event = <K extends keyof PlannedEvent>(key: K) => events.map((e) => e[key]);
  return [
    column((plan) => plan.id),
    column((plan) => plan.leaseToken),
    column((plan) => plan.startedAt),
    now,
    column((plan) => plan.attempt),
    end('status'),
    end('code'),
    end('detail'),
    end('cpuMs'),
    end('peakRssBytes'),
    end('stack'),
    column((plan) => plan.job.type),
    column(({ job }) => (job.type === 'finishBadly' ? job.status : 'QUEUED')),
    column(({ job }) => (job.type === 'requeue' ? job.runAt : null)),
    ...(['jobId', 'ts', 'event', 'actor', 'detail'] as const).map(event),
  ];
}

/** The plans' own log lines, in one statement; none is written for plans without. */
async function recordLogs(db: Db, plans: OutcomePlan[]): Promise<void> {
  const logged = plans.flatMap((plan) => (plan.logs === undefined ? [] : jobLogRows(plan.id, plan.attempt, plan.logs)));
  if (logged.length === 0) return;
  const column = <K extends keyof JobLogRow>(key: K) => logged.map((row) => row[key]);
  await changes(db, HISTORY_SQL.logInsertMany, [
    column('job_id'),
    column('attempt'),
    column('seq'),
    column('ts'),
    column('level'),
    column('message'),
    column('fields'),
  ]);
}
