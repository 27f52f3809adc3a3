import type { Clock } from '../../src/clock.js';
import { Queue } from '../../src/queue/queue.js';
import type { Store } from '../../src/store/types.js';
import { claimJobs } from '../helpers/fenced-writes.js';

/** Rows in the query-plan suites' queue: enough for a planner to prefer an index to a scan. */
const DEPTH = 50_000;
/** Children in the registry's history (it keeps every child that ran): the same. */
const CHILDREN = 1_500;

/**
 * The query-plan suites' queue, the same on both drivers: DEPTH jobs over four
 * classes, priorities and delays mixed, every 100th with an idempotency key;
 * 500 email jobs held by owner `w1`, 250 of them finished and 100 failed for
 * good with one of three error codes. A registry with history: CHILDREN children
 * of 30 hosts' supervisors, most exited (some by a crash), and a class two
 * of those supervisors disabled.
 */
export async function seedDeepQueue(store: Store, clock: Clock): Promise<void> {
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
  const held = await claimJobs(store, { classes: ['email'], ownerId: 'w1', limit: 500, leaseMs: 30_000 });
  await store.jobsSettle({
    settlements: held.slice(0, 250).map((job) => ({ id: job.id, leaseToken: job.leaseToken, startedAt: null, verdict: { type: 'complete', result: null } })),
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
    await store.workerRegister({ id: `h${n}`, kind: 'supervisor', host: `h${n}`, supervisorId: null, pid: n, class: null, state: 'ready', restarts: 0 });
  }
  for (let n = 0; n < CHILDREN; n++) {
    const id = `h${n % 30}/child-${n}`;
    await store.workerRegister({ id, kind: 'child', host: `h${n % 30}`, supervisorId: `h${n % 30}`, pid: n, class: 'email', state: 'ready', restarts: 0 });
    if (n % 10 !== 0) await store.workerExit({ id, state: 'exited', exitCode: n % 7 === 0 ? 1 : 0, exitSignal: null });
  }
  await store.classDisabledRecord({ supervisorId: 'h1', class: 'video', reason: 'crash loop' });
  await store.classDisabledRecord({ supervisorId: 'h2', class: 'video', reason: 'crash loop' });
}
