/**
 * DashboardData on real stores (a SQLite file, a PostgreSQL schema) under a
 * hand-moved clock: what each method answers, what the overview keeps (the
 * counts for a second, ended minutes of the chart for good) and the
 * classes-in-trouble rule.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ClassConfig } from '../../src/config/schema.js';
import { COUNTS_MAX_AGE_MS, dashboardData, WORKERS_SHOWN, type DashboardData } from '../../src/dashboard/data.js';
import { Recent } from '../../src/dashboard/recent.js';
import { CHART_MINUTES, MINUTE_MS, SETTLE_MS } from '../../src/dashboard/throughput.js';
import { STALE_SUPERVISOR_MS } from '../../src/queue/registry.js';
import { Queue } from '../../src/queue/queue.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs, completeIfHeld, failIfHeld } from '../helpers/fenced-writes.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-dashboard-data-');
const schemas = schemaPool('lh_dash');

const DRIVERS: [string, (clock: TestClock) => Promise<Store>][] = [
  ['sqlite', (clock) => SqliteStore.open({ path: dbPathIn(newDir()), clock })],
  ['postgres', (clock) => PostgresStore.open({ database: pgUrl(schemas.next()), clock })],
];

describe.each(DRIVERS)('DashboardData on %s', (_driver, openStore) => {
  let clock: TestClock;
  let store: Store;
  let queue: Queue;
  /** The statsFinishedByMinute windows the store was asked for. */
  let minuteReads: { since: number; until: number }[];
  let data: DashboardData;
  const open = (classes?: readonly ClassConfig[]) => dashboardData(store, { now: () => clock.now(), classes });

  beforeEach(async () => {
    clock = new TestClock(Date.UTC(2026, 0, 1, 12)); // on a minute
    store = await openStore(clock);
    queue = new Queue(store, { clock });
    minuteReads = [];
    const read = store.statsFinishedByMinute.bind(store);
    store.statsFinishedByMinute = async (params) => {
      minuteReads.push(params);
      return read(params);
    };
    data = open();
  });
  afterEach(async () => {
    await store.close();
    await schemas.dropAll();
  });

  /** Claim the next job of `cls` as `owner`. */
  const claim = async (cls: string, owner = 'host/child-1') => {
    const [job] = await claimJobs(store, { classes: [cls], ownerId: owner, limit: 1, leaseMs: 30_000 });
    if (job === undefined) throw new Error(`nothing of ${cls} to claim`);
    return job;
  };
  const succeed = async (cls: string) => {
    const job = await claim(cls);
    await completeIfHeld(store, { id: job.id, leaseToken: job.leaseToken, result: null });
    return job.id;
  };
  const fail = async (cls: string, code: string) => {
    const job = await claim(cls);
    await failIfHeld(store, {
      id: job.id,
      leaseToken: job.leaseToken,
      error: { code, detail: 'd', retryable: false },
      retryDelayMs: 0,
    });
    return job.id;
  };
  const registerSupervisor = (id: string) =>
    store.workerRegister({
      id,
      kind: 'supervisor',
      host: `host-of-${id}`,
      supervisorId: null,
      pid: 1,
      class: null,
      state: 'ready',
      restarts: 0,
    });
  const registerChild = (id: string, supervisorId: string, cls: string) =>
    store.workerRegister({
      id,
      kind: 'child',
      host: `host-of-${supervisorId}`,
      supervisorId,
      pid: 2,
      class: cls,
      state: 'ready',
      restarts: 0,
    });

  it('overview: counts by class and status, kept for a second', async () => {
    await queue.enqueueMany([{ class: 'a' }, { class: 'a' }, { class: 'b', maxRetries: 0 }]);
    await fail('b', 'E:1');
    const first = await data.overview();
    expect(first.counts.total).toMatchObject({ QUEUED: 2, FAILED: 1, total: 3 });
    expect(first.counts.by_class.map((row) => [row.class, row.total])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
    expect(first.counts_at).toBe(clock.now());

    await queue.enqueue({ class: 'c' });
    clock.advance(COUNTS_MAX_AGE_MS - 1);
    const kept = await data.overview();
    expect(kept.counts.total.total).toBe(3);
    expect(kept.counts_at).toBe(first.counts_at);
    clock.advance(1);
    const recounted = await data.overview();
    expect(recounted.counts.total.total).toBe(4);
    expect(recounted.counts_at).toBe(clock.now());
  });

  it('overview: the last hour by minute, every minute present, ended minutes read once', async () => {
    const start = clock.now();
    await queue.enqueueMany(Array.from({ length: 6 }, () => ({ class: 'a', maxRetries: 0 })));
    await succeed('a');
    await fail('a', 'E:1');
    clock.advance(2 * MINUTE_MS + 10_000);
    await succeed('a');
    const chart = (await data.overview()).throughput;
    expect(chart).toHaveLength(CHART_MINUTES);
    expect(chart.at(-1)).toEqual({ minute: start + 2 * MINUTE_MS, SUCCEEDED: 1, FAILED: 0 });
    expect(chart.at(-3)).toEqual({ minute: start, SUCCEEDED: 1, FAILED: 1 });
    expect(chart.at(-2)).toEqual({ minute: start + MINUTE_MS, SUCCEEDED: 0, FAILED: 0 });
    expect(chart[0]!.minute).toBe(start + 2 * MINUTE_MS - (CHART_MINUTES - 1) * MINUTE_MS);
    expect(minuteReads).toEqual([{ since: chart[0]!.minute, until: start + 3 * MINUTE_MS }]);

    // The minutes that ended are kept: the next read starts at the current minute, and a
    // FAILED job retried since still counts where it failed.
    const failed = (await store.jobList({ status: 'FAILED', limit: 1 }))[0]!.id;
    expect(await store.jobRetry({ id: failed, actor: 'op' })).toBe('queued');
    clock.advance(1_000);
    const again = (await data.overview()).throughput;
    expect(minuteReads.at(-1)).toEqual({ since: start + 2 * MINUTE_MS, until: start + 3 * MINUTE_MS });
    expect(again.at(-3)).toEqual({ minute: start, SUCCEEDED: 1, FAILED: 1 });

    // The minute before the current one is read again until SETTLE_MS after it ended.
    clock.advance(MINUTE_MS - 11_000 + SETTLE_MS - 1); // start + 3 min + SETTLE_MS - 1
    await data.overview();
    expect(minuteReads.at(-1)?.since).toBe(start + 2 * MINUTE_MS);
    clock.advance(1);
    await data.overview();
    expect(minuteReads.at(-1)?.since).toBe(start + 2 * MINUTE_MS); // settled now, on this read
    await data.overview();
    expect(minuteReads.at(-1)?.since).toBe(start + 3 * MINUTE_MS);
  });

  it('overview: the oldest jobs in flight with owner, heartbeat age and lease left; top errors of the last hour; paused classes', async () => {
    await queue.enqueueMany([{ class: 'a', maxRetries: 0 }, { class: 'a', maxRetries: 0 }, { class: 'b' }]);
    await fail('a', 'OLD:ONE');
    clock.advance(2 * 3_600_000);
    await fail('a', 'NEW:ONE');
    const held = await claim('b', 'host/child-9');
    clock.advance(4_000);
    await store.classPause({ class: 'b', actor: 'op' });
    const overview = await data.overview();
    expect(overview.in_flight).toEqual([
      expect.objectContaining({
        id: held.id,
        class: 'b',
        owner_id: 'host/child-9',
        heartbeat_age_ms: 4_000,
        lease_left_ms: 26_000,
        held_ms: 4_000,
      }),
    ]);
    expect(overview.top_errors.map((error) => error.code)).toEqual(['NEW:ONE']);
    expect(overview.paused).toEqual([{ class: 'b', paused_at: clock.now(), paused_by: 'op' }]);
    expect(overview.troubles).toEqual([]);
  });

  it("overview: classes disabled by live supervisors, and crash loops read from the children's exits", async () => {
    await registerSupervisor('sup-1');
    await registerSupervisor('sup-stale');
    await store.classDisabledRecord({ supervisorId: 'sup-stale', class: 'old', reason: 'crash loop' });
    clock.advance(STALE_SUPERVISOR_MS + 1);
    await store.workerHeartbeat({ id: 'sup-1' });
    await store.classDisabledRecord({ supervisorId: 'sup-1', class: 'ghost', reason: 'handler failed to load' });
    const crash = async (id: string, cls: string, exitCode: number | null, exitSignal: string | null) => {
      await registerChild(id, 'sup-1', cls);
      await store.workerExit({ id, state: 'exited', exitCode, exitSignal });
    };
    await crash('c1', 'loopy', 1, null);
    await crash('g1', 'ghost', 1, null); // disabled: shown once, as disabled
    await crash('g2', 'ghost', 1, null);
    await crash('s1', 'slowloop', 1, null);
    await crash('o1', 'once', null, 'SIGKILL'); // one abnormal exit is not a loop
    await crash('ok1', 'clean', 0, null);
    await crash('ok2', 'clean', 0, null);
    clock.advance(30_000);
    await crash('c2', 'loopy', null, 'SIGKILL');
    await crash('s2', 'slowloop', 2, null);
    await store.workerHeartbeat({ id: 'sup-1' });

    const slowloop = { name: 'slowloop', restart: { max_restarts: 5, within_seconds: 20 } } as unknown as ClassConfig;
    const troubles = (await open([slowloop]).overview()).troubles;
    expect(troubles).toEqual([
      {
        class: 'ghost',
        kind: 'disabled',
        supervisor_id: 'sup-1',
        host: 'host-of-sup-1',
        reason: 'handler failed to load',
        since: clock.now() - 30_000,
      },
      {
        class: 'loopy',
        kind: 'crash_loop',
        supervisor_id: null,
        host: null,
        reason: '2 children ended abnormally within 60s (the last by signal SIGKILL)',
        since: clock.now() - 30_000,
      },
    ]);
    // without the config, slowloop's window is the default (60 s): two exits 30 s apart are a loop
    expect((await data.overview()).troubles.map((trouble) => trouble.class)).toEqual(['ghost', 'loopy', 'slowloop']);

    // once the supervisor is stale, none of it shows
    clock.advance(STALE_SUPERVISOR_MS + 1);
    expect((await data.overview()).troubles).toEqual([]);
  });

  it('jobs: newest first by keyset pages, with every filter; the next cursor is null on the last page', async () => {
    await queue.enqueueMany(Array.from({ length: 7 }, (_, i) => ({ class: i % 2 === 0 ? 'a' : 'b', maxRetries: 0 })));
    await fail('a', 'E:1'); // 1
    await fail('b', 'E:2'); // 2
    await fail('a', 'E:1'); // 3
    await succeed('b'); // 4
    const first = await data.jobs({ limit: 3 });
    expect(first.jobs.map((job) => job.id)).toEqual([7, 6, 5]);
    expect(first.next_before_id).toBe(5);
    const second = await data.jobs({ limit: 3, beforeId: 5 });
    expect(second.jobs.map((job) => job.id)).toEqual([4, 3, 2]);
    const last = await data.jobs({ limit: 3, beforeId: 2 });
    expect(last).toEqual({ jobs: [expect.objectContaining({ id: 1 })], next_before_id: null });
    expect(await data.jobs({ limit: 1, beforeId: 1 })).toEqual({ jobs: [], next_before_id: null });
    expect((await data.jobs({ limit: 10, errorCode: 'E:1' })).jobs.map((job) => job.id)).toEqual([3, 1]);
    expect((await data.jobs({ limit: 1, errorCode: 'E:1', class: 'a' })).next_before_id).toBe(3);
    expect((await data.jobs({ limit: 10, status: 'QUEUED', class: 'a' })).jobs.map((job) => job.id)).toEqual([7, 5]);
    expect((await data.jobs({ limit: 10, errorCode: 'E:1', status: 'QUEUED' })).jobs).toEqual([]);
  });

  it('job, jobByKey and failedCount', async () => {
    const keyed = (await queue.enqueue({ class: 'a', key: 'order-1', maxRetries: 0 })).id;
    const other = (await queue.enqueue({ class: 'b', key: 'order-1' })).id;
    await fail('a', 'E:1');
    const detail = await data.job(keyed);
    expect(detail?.job).toMatchObject({ id: keyed, status: 'FAILED', error_code: 'E:1' });
    expect(detail?.attempts.map((attempt) => [attempt.attempt, attempt.status])).toEqual([[1, 'FAILED']]);
    expect(detail?.events.map((event) => event.event)).toEqual(['ENQUEUED', 'CLAIMED', 'FAILED']);
    expect(await data.job(4242)).toBeUndefined();
    expect((await data.jobByKey('order-1'))?.id).toBe(other);
    expect((await data.jobByKey('order-1', 'a'))?.id).toBe(keyed);
    expect(await data.jobByKey('order-2')).toBeUndefined();
    expect(await data.failedCount({})).toBe(1);
    expect(await data.failedCount({ class: 'a', errorCode: 'E:1' })).toBe(1);
    expect(await data.failedCount({ errorCode: 'E:2' })).toBe(0);
  });

  it('workers: supervisors and children, newest first, stale ones flagged', async () => {
    await registerSupervisor('sup-1');
    clock.advance(1);
    await registerChild('sup-1/a.0.1', 'sup-1', 'a');
    clock.advance(STALE_SUPERVISOR_MS + 1);
    await registerSupervisor('sup-2');
    const workers = await data.workers();
    expect(workers.map((worker) => [worker.id, worker.stale])).toEqual([
      ['sup-2', false],
      ['sup-1/a.0.1', true],
      ['sup-1', true],
    ]);
    expect(workers[1]).toMatchObject({ class: 'a', supervisor_id: 'sup-1', uptime_ms: STALE_SUPERVISOR_MS + 1 });
  });

  it('workers: a supervisor older than the newest WORKERS_SHOWN rows is still shown, so its children are flagged', async () => {
    await registerSupervisor('sup-old');
    await registerChild('sup-old/live', 'sup-old', 'a');
    for (let n = 0; n < WORKERS_SHOWN; n++) {
      clock.advance(1);
      await registerChild(`sup-old/gone.${n}`, 'sup-old', 'a');
      await store.workerExit({ id: `sup-old/gone.${n}`, state: 'exited', exitCode: 1, exitSignal: null });
    }
    clock.advance(STALE_SUPERVISOR_MS + 1);
    const workers = await data.workers();
    expect(workers).toHaveLength(WORKERS_SHOWN + 2);
    expect(
      workers
        .filter((worker) => worker.stale)
        .map((worker) => worker.id)
        .sort(),
    ).toEqual(['sup-old', 'sup-old/live']);
  });
});

describe('Recent (the counts kept for a second)', () => {
  it('callers while a read is in flight share it; a failed read is not kept', async () => {
    const clock = new TestClock();
    let reads = 0;
    let failNext = false;
    const recent = new Recent(
      1_000,
      () => clock.now(),
      async () => {
        reads += 1;
        if (failNext) throw new Error('the database is away');
        return reads;
      },
    );
    const [a, b] = await Promise.all([recent.get(), recent.get()]);
    expect([a.value, b.value, reads]).toEqual([1, 1, 1]);
    clock.advance(1_000);
    failNext = true;
    await expect(recent.get()).rejects.toThrow('the database is away');
    failNext = false;
    expect((await recent.get()).value).toBe(3);
  });
});
