import type { Clock } from '../../src/clock.js';
import { Queue } from '../../src/queue/queue.js';
import type { Store } from '../../src/store/types.js';
import { claimJobs } from '../helpers/fenced-writes.js';

/** Rows in the query-plan suites' queue: enough for a planner to prefer an index to a scan. */
const DEPTH = 50_000;

/**
 * The query-plan suites' queue, the same on both drivers: DEPTH jobs over four
 * classes, priorities and delays mixed; 500 email jobs held by owner `w1`, 250
 * of them finished.
 */
export async function seedDeepQueue(store: Store, clock: Clock): Promise<void> {
  const queue = new Queue(store, { clock });
  const classes = ['email', 'sms', 'report', 'video'];
  for (let start = 0; start < DEPTH; start += 10_000) {
    await queue.enqueueMany(
      Array.from({ length: 10_000 }, (_, i) => ({ class: classes[(start + i) % 4]!, priority: (start + i) % 7, delay: (i % 3) * 10 })),
    );
  }
  const held = await claimJobs(store, { classes: ['email'], ownerId: 'w1', limit: 500, leaseMs: 30_000 });
  await store.jobsSettle({
    settlements: held.slice(0, 250).map((job) => ({ id: job.id, leaseToken: job.leaseToken, startedAt: null, verdict: { type: 'complete', result: null } })),
  });
}
