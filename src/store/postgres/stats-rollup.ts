import {
  afterRollUp,
  COST_TOP_KEPT,
  floorMinute,
  isCatchUp,
  minutesIn,
  nextRollUp,
  oldestKept,
  rolledMinutesOf,
  type RolledMinutes,
  type RolledRow,
} from '../stats-window.js';
import { first, type Db } from './connection.js';
import { ROLLUP_SQL } from './sql/rollup.js';

/**
 * How late a finished job can commit behind its finished_at, past the start of the oldest transaction still
 * holding the jobs. Each write takes its time (the server's, on this host's monotonic clock) after its
 * transaction began, or, a write of one statement, as it sends it: a transaction the roll-up sees holding the
 * jobs ends no job before it began, and one it does not see yet ends none before this grace ago. The grace
 * covers the clock's error (half a round trip) and a statement's way to the server.
 */
export const POSTGRES_ROLLUP_GRACE_MS = 2_000;
/**
 * The same when a transaction holding the jobs is one whose start this role may not see (another role's, or a
 * prepared transaction): the bound before issue 53.
 */
export const POSTGRES_HIDDEN_GRACE_MS = 60_000;

/** The time the rollup covers; undefined before its first roll-up. */
export async function rolledMinutes(db: Db): Promise<RolledMinutes | undefined> {
  return rolledMinutesOf(await first<RolledRow>(db, ROLLUP_SQL.state));
}

/**
 * Whether a roll-up at `now` may have anything to write, looked at without a lock or a transaction: every
 * supervisor of every host rolls up each second, and on an idle queue a tick that took the row lock was a write
 * transaction (a transaction id, a WAL flush) that did nothing. The least grace gives the widest range the
 * locked roll-up could sum, so a look that finds nothing ended in it finds what the roll-up would have found; a
 * job that commits after the look is summed at the next tick.
 */
export async function rollUpDue(db: Db, now: number, maxMinutes: number): Promise<boolean> {
  const until = now - POSTGRES_ROLLUP_GRACE_MS;
  const row = await first<RolledRow & { ended: boolean }>(db, ROLLUP_SQL.due, [oldestKept(now), until]);
  const rolled = rolledMinutesOf(row);
  const range = nextRollUp(rolled, now, maxMinutes, POSTGRES_ROLLUP_GRACE_MS);
  if (range === undefined) return false;
  return rolled === undefined || isCatchUp(range, maxMinutes) || row?.ended === true;
}

/**
 * Inside a transaction: sum what ended since the rollup's end (at most `maxMinutes`); how many minutes that
 * was. While no job has finished since the rollup's end only a catch-up (isCatchUp) is written: a later roll-up
 * takes the rest on. A catch-up over minutes where nothing ended covers them all at once, as SQLite's does: a
 * new queue's day, a few empty minutes per transaction, held the rollup's row lock for hundreds of them while
 * its first jobs ran.
 */
export async function rollUp(db: Db, now: number, maxMinutes: number): Promise<number> {
  const rolled = rolledMinutesOf(await first<RolledRow>(db, ROLLUP_SQL.lockState));
  const grace = await graceNow(db);
  let range = nextRollUp(rolled, now, maxMinutes, grace);
  if (range === undefined) return 0;
  const pending = [range.from, now - grace];
  if (isCatchUp(range, maxMinutes)) {
    const at = (await first<{ at: string | null }>(db, ROLLUP_SQL.firstEnded, pending))?.at ?? null;
    const emptyUntil = at === null ? now - grace : floorMinute(Number(at));
    if (emptyUntil > range.until) range = { from: range.from, until: emptyUntil };
  } else if (rolled !== undefined && (await first(db, ROLLUP_SQL.anyEnded, pending)) === undefined) return 0;
  const keep = afterRollUp(rolled, range, now);
  await db.query({ ...ROLLUP_SQL.rollUp, values: [range.from, range.until, COST_TOP_KEPT, keep.from] });
  await db.query({ ...ROLLUP_SQL.pruneCostTop, values: [range.from, COST_TOP_KEPT] });
  return minutesIn(range);
}

/**
 * How far behind now a roll-up stops: the grace, past the start of the oldest transaction holding the jobs.
 * Read before the sums, whose later snapshots see every transaction that committed since: one still open then
 * was holding the jobs here, or takes its time after this.
 */
async function graceNow(db: Db): Promise<number> {
  const open = await first<{ open_ms: number | null; hidden: boolean | null }>(db, ROLLUP_SQL.openWrites);
  if (open?.hidden === true) return POSTGRES_HIDDEN_GRACE_MS;
  return POSTGRES_ROLLUP_GRACE_MS + Math.max(0, open?.open_ms ?? 0);
}
