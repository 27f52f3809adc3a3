/**
 * A PostgreSQL roll-up with nothing new to sum (issue 53): every supervisor
 * of every host rolls up each second, and on an idle queue each tick took
 * the rollup's row lock, so each was a write transaction (a transaction id,
 * a WAL flush at commit) that did nothing, and the hosts took turns on the
 * lock. It now looks without a lock or a transaction first; only a tick with
 * jobs to sum takes its turn on the row.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from '../../src/queue/queue.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { MINUTE_MS } from '../../src/store/stats-window.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { waitFor } from '../helpers/wait.js';

const schemas = schemaPool('lh_rollup_idle');
const PER_ROLL_UP = 5;
/** A roll-up that waits on the row lock this long is waiting for its release, which only the test gives. */
const BLOCKED_AFTER_MS = 10_000;

describe('PostgreSQL stats roll-up on an idle queue', () => {
  let queue: Queue | undefined;
  /** A session holding the rollup's row, and a look at the server apart from it (a transaction sees its first look). */
  let holder: pg.Client | undefined;
  let peek: pg.Client | undefined;
  afterEach(async () => {
    await holder?.query('ROLLBACK').catch(() => undefined);
    await holder?.end();
    await peek?.end();
    await queue?.close();
    holder = peek = queue = undefined;
  });

  async function endOneJob(store: PostgresStore): Promise<void> {
    await queue!.enqueue({ class: 'email' });
    const [job] = await claimJobs(store, { classes: ['email'], ownerId: 'owner-a', limit: 1, leaseMs: 60_000 });
    await store.jobsSettle({
      settlements: [
        { id: job!.id, leaseToken: job!.leaseToken, startedAt: null, verdict: { type: 'complete', result: null } },
      ],
    });
  }

  /** The roll-up's answer, or 'blocked' while another session holds the rollup's row. */
  async function rollUpBeside(store: PostgresStore): Promise<number | 'blocked'> {
    return await Promise.race([
      store.statsRollUp({ maxMinutes: PER_ROLL_UP }),
      sleep(BLOCKED_AFTER_MS, 'blocked' as const, { ref: false }),
    ]);
  }

  it('looks without the row lock while nothing new ended, and takes its turn once something did', async () => {
    const clock = new TestClock();
    const schema = schemas.next();
    const store = await PostgresStore.open({ database: pgUrl(schema), clock });
    queue = new Queue(store, { clock, unknownClass: 'ignore' });
    await endOneJob(store);
    clock.advance(MINUTE_MS);
    while ((await store.statsRollUp({ maxMinutes: PER_ROLL_UP })) >= PER_ROLL_UP);
    clock.advance(10_000);

    // Another supervisor's roll-up holds the row.
    holder = await adminClient(schema);
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM stats_rollup WHERE id = 1 FOR UPDATE');
    expect(await rollUpBeside(store)).toBe(0);

    // A job ended: this roll-up has work, and waits for its turn.
    await endOneJob(store);
    clock.advance(10_000);
    const summing = store.statsRollUp({ maxMinutes: PER_ROLL_UP });
    peek = await adminClient();
    await waitFor('the roll-up to wait for the row lock', async () => {
      const waiting = await peek!.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FROM stats_rollup%FOR UPDATE%'
           AND pid <> pg_backend_pid()`,
      );
      return waiting.rowCount! > 0;
    });
    await holder.query('ROLLBACK');
    expect(await summing).toBeGreaterThan(0);
  });
});
