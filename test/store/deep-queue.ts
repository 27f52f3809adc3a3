import { windowParts } from '../../src/store/stats-window.js';
import { TestClock } from '../helpers/clock.js';
import { Queue } from '../../src/queue/queue.js';
import type { Store } from '../../src/store/types.js';
import { claimJobs } from '../helpers/fenced-writes.js';

/** Rows in the query-plan suites' queue: enough for a planner to prefer an index to a scan. */
const DEPTH = 50_000;
/** Children in the registry's history (it keeps every child that ran): the same. */
const CHILDREN = 1_500;

/** Video jobs run and measured (their cost written), COST_ROUNDS rounds of COST_ROUND_JOBS an hour apart, one in ten failed: a window of the last hour holds one round. */
const COST_ROUNDS = 20;
const COST_ROUND_JOBS = 200;
const HOUR = 3_600_000;
/** The start of a window of the last hour, at the clock's time after seeding (a TestClock from its default start): it holds one round. */
export const LAST_HOUR_SINCE = new TestClock().now() + (COST_ROUNDS - 1) * HOUR;

/** A window from `since` as the stats reads split it, with a rollup that covers its middle: each part is planned. */
export const windowOf = (since: number) => windowParts(since, { from: since - HOUR, until: since + HOUR / 2 });

/**
 * The query-plan suites' queue, the same on both drivers: DEPTH jobs over four
 * classes, priorities and delays mixed, every 100th with an idempotency key;
 * 500 email jobs held by owner `w1`, 250 of them finished (8 log lines each) and 100 failed for
 * good with one of three error codes; 4,000 video jobs ended with their cost
 * (one in ten FAILED), over the 20 hours before the clock's time after
 * seeding; 500 report jobs with three WAITING dependents each. A registry with history: CHILDREN children of 30 hosts'
 * supervisors, most exited (some by a crash), and a class two of those
 * supervisors disabled.
 */
export async function seedDeepQueue(store: Store, clock: TestClock): Promise<void> {
  const queue = new Queue(store, { clock });
  const classes = ['email', 'sms', 'report', 'video'];
  for (let start = 0; start < DEPTH; start += 10_000) {
    await queue.enqueueMany(
      Array.from({ length: 10_000 }, (_, i) => ({
        class: classes[(start + i) % 4]!,
        priority: (start + i) % 7,
        delay: (i % 3) * 10,
        ...((start + i) % 100 === 0 ? { key: `key-${start + i}` } : {}),
      })),
    );
  }
  // flows: 500 report jobs, each with three waiting dependents by ref
  for (let group = 0; group < 500; group += 100)
    await queue.enqueueMany(
      Array.from({ length: 100 }, (_, g) => [
        { class: 'report', ref: `p${group + g}` },
        ...[1, 2, 3].map(() => ({ class: 'report', dependsOn: [`p${group + g}`] })),
      ]).flat(),
    );
  const held = await claimJobs(store, { classes: ['email'], ownerId: 'w1', limit: 500, leaseMs: 30_000 });
  await store.jobsSettle({
    // each with its own log lines, for a planner to weigh job_logs' key against a scan
    settlements: held.slice(0, 250).map((job) => ({
      id: job.id,
      leaseToken: job.leaseToken,
      startedAt: null,
      verdict: { type: 'complete', result: null },
      logs: {
        lines: Array.from({ length: 8 }, (_, n) => ({
          ts: clock.now(),
          level: 'info',
          msg: `step ${n}`,
          fields: null,
        })),
        dropped: 0,
      },
    })),
  });
  await store.jobsSettle({
    settlements: held.slice(250, 350).map((job, i) => ({
      id: job.id,
      leaseToken: job.leaseToken,
      startedAt: null,
      verdict: { type: 'fail', error: { code: `E:${i % 3}`, detail: 'd', retryable: false }, retryDelayMs: 0 },
    })),
  });
  for (let n = 0; n < 30; n++) {
    await store.workerRegister({
      id: `h${n}`,
      kind: 'supervisor',
      host: `h${n}`,
      supervisorId: null,
      pid: n,
      class: null,
      state: 'ready',
      restarts: 0,
    });
  }
  for (let n = 0; n < CHILDREN; n++) {
    const id = `h${n % 30}/child-${n}`;
    await store.workerRegister({
      id,
      kind: 'child',
      host: `h${n % 30}`,
      supervisorId: `h${n % 30}`,
      pid: n,
      class: 'email',
      state: 'ready',
      restarts: 0,
    });
    if (n % 10 !== 0) await store.workerExit({ id, state: 'exited', exitCode: n % 7 === 0 ? 1 : 0, exitSignal: null });
  }
  await store.classDisabledRecord({ supervisorId: 'h1', class: 'video', reason: 'crash loop' });
  await store.classDisabledRecord({ supervisorId: 'h2', class: 'video', reason: 'crash loop' });
  for (let round = 0; round < COST_ROUNDS; round++) {
    const ran = await claimJobs(store, { classes: ['video'], ownerId: 'w2', limit: COST_ROUND_JOBS, leaseMs: 30_000 });
    await store.jobsSettle({
      settlements: ran.map((job, n) => ({
        id: job.id,
        leaseToken: job.leaseToken,
        startedAt: null,
        verdict:
          n % 10 === 0
            ? { type: 'fail', error: { code: 'SEED:FAILED', detail: 'seeded', retryable: false }, retryDelayMs: 0 }
            : { type: 'complete', result: null },
        cost: { cpuMs: n, peakRssBytes: (60 + n) * 1024 * 1024 },
      })),
    });
    clock.advance(HOUR);
  }
}
