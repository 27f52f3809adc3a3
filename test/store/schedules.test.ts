/**
 * Schedules without processes: which occurrences are due (fixed dates), and
 * catch-up after downtime through the real SQLite store, driven by a test
 * clock (stop: no passes; start again: a pass at a later time).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { cronOf } from '../../src/queue/cron.js';
import {
  CATCH_UP_CAP,
  ON_TIME_MS,
  occurrenceKey,
  planOccurrences,
  runSchedules,
  schedulesOf,
  type Schedule,
} from '../../src/queue/schedules.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { TestClock } from '../helpers/clock.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const at = (iso: string) => Date.parse(iso);
const iso = (times: number[]) => times.map((t) => new Date(t).toISOString());

describe('planOccurrences', () => {
  const everyMinute = cronOf('* * * * *', 'UTC');

  it('enqueues what came due since the cursor, and nothing when nothing did', () => {
    const plan = planOccurrences(everyMinute, 'none', at('2026-03-01T10:00:00Z'), at('2026-03-01T10:01:00.004Z'));
    expect(iso(plan.enqueue)).toEqual(['2026-03-01T10:01:00.000Z']);
    expect(plan).toMatchObject({ skipped: undefined, through: at('2026-03-01T10:01:00Z') });
    expect(planOccurrences(everyMinute, 'all', at('2026-03-01T10:01:00Z'), at('2026-03-01T10:01:59.999Z'))).toEqual({
      enqueue: [],
      skipped: undefined,
      through: undefined,
    });
  });

  it('treats occurrences within ON_TIME_MS as on time, every one of them, whatever catch_up says', () => {
    const perSecond = cronOf('* * * * * *', 'UTC');
    const plan = planOccurrences(
      perSecond,
      'none',
      at('2026-03-01T10:00:00Z'),
      at('2026-03-01T10:00:00Z') + ON_TIME_MS,
    );
    expect(plan.enqueue).toHaveLength(ON_TIME_MS / SECOND);
    expect(plan.skipped).toBeUndefined();
  });

  it('after downtime: latest enqueues the most recent missed one, all every one, none skips them', () => {
    const cursor = at('2026-03-01T10:00:30Z');
    const now = at('2026-03-01T13:00:05Z'); // 13:00 is on time, 10:01 .. 12:59 were missed
    expect(iso(planOccurrences(everyMinute, 'latest', cursor, now).enqueue)).toEqual([
      '2026-03-01T12:59:00.000Z',
      '2026-03-01T13:00:00.000Z',
    ]);
    expect(planOccurrences(everyMinute, 'latest', cursor, now).skipped).toEqual({
      first: at('2026-03-01T10:01:00Z'),
      last: at('2026-03-01T12:58:00Z'),
    });
    const all = planOccurrences(everyMinute, 'all', cursor, now);
    expect(all.enqueue).toHaveLength(3 * 60);
    expect(iso([all.enqueue[0]!, all.enqueue.at(-1)!])).toEqual([
      '2026-03-01T10:01:00.000Z',
      '2026-03-01T13:00:00.000Z',
    ]);
    expect(all.skipped).toBeUndefined();
    expect(planOccurrences(everyMinute, 'none', cursor, now)).toEqual({
      enqueue: [at('2026-03-01T13:00:00Z')],
      skipped: { first: at('2026-03-01T10:01:00Z'), last: at('2026-03-01T12:59:00Z') },
      through: at('2026-03-01T13:00:00Z'),
    });
  });

  it('caps catch_up all at the latest CATCH_UP_CAP missed occurrences', () => {
    const cursor = at('2026-03-01T00:00:00Z');
    const plan = planOccurrences(everyMinute, 'all', cursor, cursor + 2 * CATCH_UP_CAP * MINUTE + 30 * SECOND);
    expect(plan.enqueue).toHaveLength(CATCH_UP_CAP);
    expect(plan.enqueue.at(-1)).toBe(cursor + 2 * CATCH_UP_CAP * MINUTE);
    expect(plan.skipped).toEqual({ first: cursor + MINUTE, last: plan.enqueue[0]! - MINUTE });
  });

  it('reads the expression in its time zone, and keys each occurrence by its UTC instant', () => {
    const nineInBerlin = cronOf('0 9 * * *', 'Europe/Berlin');
    const plan = planOccurrences(nineInBerlin, 'all', at('2026-07-01T00:00:00Z'), at('2026-07-02T12:00:00Z'));
    expect(iso(plan.enqueue)).toEqual(['2026-07-01T07:00:00.000Z', '2026-07-02T07:00:00.000Z']);
    expect(occurrenceKey('nightly', plan.enqueue[0]!)).toBe('schedule:nightly@2026-07-01T07:00:00.000Z');
  });
});

describe('catch-up after downtime, through the store', () => {
  const newDir = tempDir();
  let clock: TestClock;
  let store: SqliteStore;

  beforeEach(async () => {
    clock = new TestClock(at('2026-03-01T10:00:30Z'));
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock });
  });
  afterEach(async () => {
    await store.close();
  });

  const scheduleOf = (catchUp: string): Schedule[] =>
    schedulesOf(
      parseConfig(
        `database: ./q.db\nclasses:\n  - name: report\n    handler: ./h.js\n    max_retries: 2\n    schedules:\n      - { name: hourly, cron: "0 * * * *", catch_up: ${catchUp}, payload: { kind: digest }, priority: 4 }\n`,
        '/tmp/queue.yaml',
      ).classes,
    );
  const pass = (schedules: Schedule[]) =>
    runSchedules(store, schedules, { clock, actor: 'sup-a', payloadLimitBytes: 1024 });
  const jobs = async () => (await store.jobList({ limit: 100 })).reverse();

  /** First start at 10:00:30, stopped, started again at 15:00:02: 11:00 to 14:00 were missed, 15:00 is on time. */
  async function downtime(catchUp: string) {
    const schedules = scheduleOf(catchUp);
    expect(await pass(schedules)).toMatchObject([{ type: 'started', through: clock.now() }]);
    expect(await jobs()).toEqual([]);
    clock.advance(5 * HOUR - 28 * SECOND);
    return { outcomes: await pass(schedules), jobs: await jobs() };
  }

  it('latest: the most recent missed occurrence, then the one on time', async () => {
    const { outcomes, jobs } = await downtime('latest');
    expect(iso(jobs.map((job) => job.run_at))).toEqual(['2026-03-01T14:00:00.000Z', '2026-03-01T15:00:00.000Z']);
    expect(jobs[0]).toMatchObject({
      class: 'report',
      payload: '{"kind":"digest"}',
      priority: 4,
      max_retries_from_class: 1,
      idempotency_key: 'schedule:hourly@2026-03-01T14:00:00.000Z',
    });
    expect(outcomes).toMatchObject([
      { type: 'advanced', skipped: { first: at('2026-03-01T11:00:00Z'), last: at('2026-03-01T13:00:00Z') } },
    ]);
    expect(await store.scheduleList()).toMatchObject([
      {
        checked_through: at('2026-03-01T15:00:00Z'),
        last_run_at: at('2026-03-01T15:00:00Z'),
        last_job_id: jobs[1]!.id,
      },
    ]);
  });

  it('all: every missed occurrence, in order', async () => {
    const { outcomes, jobs } = await downtime('all');
    expect(iso(jobs.map((job) => job.run_at))).toEqual(
      ['11', '12', '13', '14', '15'].map((h) => `2026-03-01T${h}:00:00.000Z`),
    );
    expect(outcomes).toMatchObject([{ type: 'advanced', skipped: undefined }]);
  });

  it('none: only the occurrence on time, the missed ones skipped', async () => {
    const { outcomes, jobs } = await downtime('none');
    expect(iso(jobs.map((job) => job.run_at))).toEqual(['2026-03-01T15:00:00.000Z']);
    expect(outcomes).toMatchObject([
      { type: 'advanced', skipped: { first: at('2026-03-01T11:00:00Z'), last: at('2026-03-01T14:00:00Z') } },
    ]);
  });

  it('a pass that comes again enqueues nothing more, and neither does a second host that read the old cursor', async () => {
    const schedules = scheduleOf('all');
    await pass(schedules);
    clock.advance(HOUR);
    const rowBefore = await store.scheduleList();
    expect(await pass(schedules)).toMatchObject([{ type: 'advanced', enqueued: [{ at: at('2026-03-01T11:00:00Z') }] }]);
    expect(await pass(schedules)).toEqual([]);
    const late = await store.scheduleAdvance({
      class: 'report',
      name: 'hourly',
      actor: 'sup-b',
      expected: rowBefore[0]!.checked_through,
      through: at('2026-03-01T11:00:00Z'),
      jobs: [],
    });
    expect(late).toEqual({ advanced: false });
    expect(await jobs()).toHaveLength(1);
  });
});
