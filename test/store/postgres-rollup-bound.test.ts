/**
 * How far a PostgreSQL stats roll-up may sum (issue 53): up to a short grace
 * ago, and never past the start of a transaction still holding the jobs (a
 * host whose settle has not committed yet: its jobs' finished_at were taken
 * after it began). Right after a burst the reads take only that short tail
 * from the jobs, where a fixed grace of a minute made them read the whole
 * burst row by row. Real time, on the server's clock: the bound is how long
 * ago a transaction began, as the server measures it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { Queue } from '../../src/queue/queue.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { POSTGRES_ROLLUP_GRACE_MS } from '../../src/store/postgres/stats-rollup.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { holdsFor, waitFor } from '../helpers/wait.js';

const schemas = schemaPool('lh_rollup_bound');
/** What ended is summed within this, as SQLite's is (its grace is 1 s, a roll-up every second). */
const WITHIN_MS = 10_000;

describe('PostgreSQL stats roll-up bound', () => {
  let store: PostgresStore | undefined;
  let queue: Queue | undefined;
  /** The test's own transaction, and a look at the schema apart from it. */
  let admin: pg.Client | undefined;
  let peek: pg.Client | undefined;
  afterEach(async () => {
    await admin?.query('ROLLBACK').catch(() => undefined);
    await admin?.end();
    await peek?.end();
    await queue?.close();
    admin = peek = queue = store = undefined;
  });

  /** What the rollup says it covers, and the jobs it counted. */
  async function rolled(client: pg.Client): Promise<{ until: number; jobs: number }> {
    const state = await client.query<{ until: string | null }>('SELECT rolled_until AS until FROM stats_rollup');
    const counted = await client.query<{ jobs: string | null }>('SELECT sum(jobs) AS jobs FROM job_end_minutes');
    return { until: Number(state.rows[0]?.until ?? 0), jobs: Number(counted.rows[0]?.jobs ?? 0) };
  }

  const finishedAt = async (client: pg.Client, id: number) =>
    Number((await client.query<{ at: string }>('SELECT finished_at AS at FROM jobs WHERE id = $1', [id])).rows[0]!.at);

  /** A new queue with `count` jobs claimed; a way to complete one, and to roll up until the rollup covers a time. */
  async function claimedQueue(count: number) {
    const schema = schemas.next();
    store = await PostgresStore.open({ database: pgUrl(schema) });
    queue = new Queue(store, { unknownClass: 'ignore' });
    await queue.enqueueMany(Array.from({ length: count }, () => ({ class: 'email' })));
    const claimed = await claimJobs(store, { classes: ['email'], ownerId: 'owner-a', limit: count, leaseMs: 600_000 });
    admin = await adminClient(schema);
    peek = await adminClient(schema);
    const complete = async (job: (typeof claimed)[number] | undefined) => {
      await store!.jobsSettle({
        settlements: [
          { id: job!.id, leaseToken: job!.leaseToken, startedAt: null, verdict: { type: 'complete', result: null } },
        ],
      });
      return finishedAt(peek!, job!.id);
    };
    /** Roll up, as a supervisor does, until the rollup covers `at`; what it says then. */
    const rolledPast = (at: number, what: string) =>
      waitFor(
        what,
        async () => {
          await store!.statsRollUp({ maxMinutes: 5 });
          const state = await rolled(peek!);
          return state.until > at ? state : undefined;
        },
        { timeoutMs: WITHIN_MS, intervalMs: 100 },
      );
    return { claimed, complete, rolledPast };
  }

  it('sums what ended a short grace ago, held back by a transaction still holding the jobs, and counts its job once', async () => {
    const { claimed, complete, rolledPast } = await claimedQueue(3);
    const [done, inFlight, later] = claimed;
    const doneAt = await complete(done);

    // The finished job is summed within seconds (it was a minute).
    expect((await rolledPast(doneAt, 'the roll-up to cover the job that ended')).jobs).toBe(1);

    // A host's settle, begun and not committed: its time is taken after it began, as the store's writes take theirs.
    await admin!.query('BEGIN');
    await admin!.query(
      `UPDATE jobs SET status = 'SUCCEEDED', finished_at = (extract(epoch FROM now()) * 1000)::bigint,
         lease_expires_at = NULL WHERE id = $1`,
      [inFlight!.id],
    );
    const inFlightAt = await finishedAt(admin!, inFlight!.id);
    // Another job ends meanwhile and commits: a roll-up has something new to sum after the open one's time.
    const laterAt = await complete(later);
    // ...but not the time of the open transaction's job, however long it stays open.
    await holdsFor(
      'the roll-up to stay behind the open transaction',
      async () => {
        await store!.statsRollUp({ maxMinutes: 5 });
        return (await rolled(peek!)).until <= inFlightAt;
      },
      { forMs: 2 * POSTGRES_ROLLUP_GRACE_MS, intervalMs: 100 },
    );

    await admin!.query('COMMIT');
    expect((await rolledPast(laterAt, 'the roll-up to cover the committed job')).jobs).toBe(3);
  });

  it('is not held back by VACUUM or ANALYZE on the jobs, which end none', async () => {
    const { claimed, complete, rolledPast } = await claimedQueue(1);
    await admin!.query('BEGIN');
    // The lock VACUUM and ANALYZE take, held from before the job ends: a bound at this start would never cover it.
    await admin!.query('LOCK TABLE jobs IN SHARE UPDATE EXCLUSIVE MODE');
    const doneAt = await complete(claimed[0]);
    expect((await rolledPast(doneAt, 'the roll-up to cover the job that ended beside the lock')).jobs).toBe(1);
  });
});
