/**
 * PostgreSQL's order of outcomes: event ids are handed out before commit, so
 * readers follow (txid, id) below the oldest transaction still open; rows
 * from before migration 12 (no txid) come first. And the LISTEN a Queue's
 * readers share: its channel, its payload, its name in pg_stat_activity; and
 * that a transaction ending jobs notifies only while such a reader listens.
 */
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue } from '../../src/queue/queue.js';
import { OUTCOMES_START, type OutcomePosition } from '../../src/store/outcome-rows.js';
import { OUTCOMES_CHANNEL } from '../../src/store/postgres/sql/notify.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs, completeIfHeld } from '../helpers/fenced-writes.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { holdsFor, waitFor } from '../helpers/wait.js';

const schemas = schemaPool('lh_outcomes');

describe('PostgreSQL outcomes', () => {
  let schema: string;
  let store: PostgresStore;
  let queue: Queue;
  let admin: pg.Client;

  beforeEach(async () => {
    schema = schemas.next();
    const clock = new TestClock();
    store = await PostgresStore.open({ database: pgUrl(schema), clock });
    queue = new Queue(store, { clock });
    admin = await adminClient(schema);
  });
  afterEach(async () => {
    await admin.end();
    await queue.close();
  });

  /** Enqueue `count` jobs and let them succeed, each in a transaction of its own; their ids. */
  async function succeed(count: number): Promise<number[]> {
    const ids = (await queue.enqueueMany(Array.from({ length: count }, () => ({ class: 'email' })))).map((j) => j.id);
    for (const job of await claimJobs(store, { classes: ['email'], ownerId: 'w', limit: count, leaseMs: 30_000 }))
      await completeIfHeld(store, { ...job, result: null });
    return ids;
  }

  const readAll = async (after: OutcomePosition = OUTCOMES_START) =>
    (await store.outcomeEventsAfter({ after, limit: 100 })).map((row) => row.job_id);
  /** The store's outcomes listener, counting its wake-ups (an error fails the test). */
  async function listen(): Promise<{ woken: number; stop: () => Promise<void> }> {
    const listener = { woken: 0, stop: async () => undefined as void };
    const watch = await store.outcomesSubscribe(
      () => (listener.woken += 1),
      (error) => {
        throw error;
      },
    );
    listener.stop = () => watch.stop();
    return listener;
  }

  /** The reads wait for every transaction open on the server, other tests' too: read once `count` are there. */
  const readWhen = (count: number, after?: OutcomePosition) =>
    waitFor(`${count} outcomes`, async () => {
      const read = await readAll(after);
      return read.length >= count && read;
    });

  it('an outcome committed behind an open transaction waits for it, then both come in transaction order', async () => {
    const [early] = await succeed(1);
    const [open] = (await queue.enqueueMany([{ class: 'sms' }])).map((j) => j.id);
    await admin.query('BEGIN');
    // an outcome whose transaction is still open: its id (and txid) come before those of the next commits
    await admin.query(`INSERT INTO job_events (job_id, ts, event, detail) VALUES ($1, 0, 'FAILED', '{"code":"X:Y"}')`, [
      open,
    ]);
    const later = await succeed(2);
    expect(await readWhen(1)).toEqual([early]);
    await holdsFor('the later outcomes held back', async () => (await readAll()).length === 1, { forMs: 200 });
    const latest = await store.outcomeLatest();
    await admin.query('COMMIT');
    expect(await readWhen(4)).toEqual([early, open, ...later]);
    expect(await readAll(latest)).toEqual([open, ...later]);
  });

  it('rows from before migration 12 (no txid) come first, in id order, and a cursor among them goes on', async () => {
    const old = await succeed(3);
    await admin.query('UPDATE job_events SET txid = NULL');
    const recent = await succeed(2);
    expect(await readWhen(5)).toEqual([...old, ...recent]);
    const rows = await store.outcomeEventsAfter({ after: OUTCOMES_START, limit: 2 });
    expect(rows.map((row) => row.txid)).toEqual(['0', '0']);
    expect(await readAll({ txid: '0', id: rows[1]!.id })).toEqual([old[2], ...recent]);
    const all = await store.outcomeEventsAfter({ after: OUTCOMES_START, limit: 100 });
    expect(await store.outcomeLatest()).toEqual({ txid: all.at(-1)!.txid, id: all.at(-1)!.id });
    expect(Number(all.at(-1)!.txid)).toBeGreaterThan(0);
  });

  it('events in pages: every outcome once, in order, across pages and transactions', async () => {
    const ids = await succeed(30);
    await readWhen(30);
    const seen: number[] = [];
    let after = OUTCOMES_START;
    for (;;) {
      const page = await store.outcomeEventsAfter({ after, limit: 7 });
      if (page.length === 0) break;
      seen.push(...page.map((row) => row.job_id));
      after = { txid: page.at(-1)!.txid, id: page.at(-1)!.id };
    }
    expect(seen).toEqual(ids);
  });

  it("the listener hears its own schema's notifications on leasehold_outcomes, named `<name> outcomes`", async () => {
    const listener = await listen();
    try {
      const named = await admin.query<{ application_name: string }>(
        `SELECT application_name FROM pg_stat_activity WHERE query = $1 AND application_name LIKE '% outcomes'`,
        [`LISTEN ${OUTCOMES_CHANNEL}`],
      );
      expect(named.rows.length).toBeGreaterThan(0);
      await admin.query('SELECT pg_notify($1, $2)', [OUTCOMES_CHANNEL, `${schema}_other`]);
      await admin.query('SELECT pg_notify($1, $2)', [OUTCOMES_CHANNEL, schema]);
      await waitFor('a wake-up', () => listener.woken === 1);
      await holdsFor('no other wake-up', () => listener.woken === 1, { forMs: 200 });
    } finally {
      await listener.stop();
    }
  });

  it('every transaction that ends jobs wakes the listener once (leasehold_after_outcomes); an enqueue does not', async () => {
    const listener = await listen();
    try {
      const [queued] = (await queue.enqueueMany([{ class: 'sms' }])).map((j) => j.id);
      await holdsFor('no wake-up for an enqueue', () => listener.woken === 0, { forMs: 200 });
      await succeed(3);
      await waitFor('three wake-ups, one per settle', () => listener.woken === 3);
      await store.jobCancel({ id: queued!, actor: 'test' });
      await waitFor('a wake-up for the cancel', () => listener.woken === 4);
    } finally {
      await listener.stop();
    }
  });

  /** A plain LISTEN on the outcomes channel, not a reader's: the notifications sent, in commit order. */
  async function overhear(): Promise<{ heard: string[]; stop: () => Promise<void> }> {
    const client = await adminClient(schema);
    const heard: string[] = [];
    client.on('notification', (message) => heard.push(message.payload ?? ''));
    await client.query(`LISTEN ${OUTCOMES_CHANNEL}`);
    return { heard, stop: () => client.end() };
  }
  /** Notifications arrive in commit order: once a marker sent after `work` committed is heard, all of work's are. */
  async function heardDuring(ear: { heard: string[] }, work: () => Promise<unknown>): Promise<string[]> {
    const from = ear.heard.length;
    await work();
    const marker = `marker-${from}`;
    await admin.query('SELECT pg_notify($1, $2)', [OUTCOMES_CHANNEL, marker]);
    await waitFor('the marker', () => ear.heard.includes(marker));
    return ear.heard.slice(from, ear.heard.indexOf(marker));
  }

  it('a transaction that ends jobs notifies nobody while no reader of outcomes listens', async () => {
    const ear = await overhear();
    try {
      expect(await heardDuring(ear, () => succeed(2))).toEqual([]);
      const listener = await listen();
      try {
        expect(await heardDuring(ear, () => succeed(2))).toEqual([schema, schema]);
      } finally {
        await listener.stop();
      }
      expect(await heardDuring(ear, () => succeed(1))).toEqual([]);
    } finally {
      await ear.stop();
    }
  });

  it('a reader starts listening only once the transactions ending jobs that did not see it have committed', async () => {
    const [id] = (await queue.enqueueMany([{ class: 'sms' }])).map((j) => j.id);
    await admin.query('BEGIN');
    // an end that found no reader: it sent no notification, so the reader's first look must come after it commits
    await admin.query(`SELECT leasehold_after_outcomes(ARRAY[$1]::bigint[], ARRAY['SUCCEEDED'], 0, 'test')`, [id]);
    let listening = false;
    const subscribed = listen().then((listener) => {
      listening = true;
      return listener;
    });
    try {
      await holdsFor('the reader waits for the open end', () => !listening, { forMs: 300 });
    } finally {
      await admin.query('COMMIT');
    }
    await (await subscribed).stop();
  });
});
