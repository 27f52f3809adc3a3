/**
 * The stalled-loop net (CHILD_STALLED) on real processes, from the side of
 * its false positives: children that claim nothing for many poll intervals
 * while their class has due jobs, for good reasons. Every slot busy with a
 * job longer than the bound, a paused class, a rate-limited class: none is
 * found stalled while each has jobs due for several times the bound. The
 * net catching a real stall: test/faults/postgres-half-open.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { holdsFor } from '../helpers/wait.js';
import { stallAfterMs } from '../../supervisor/stall-watch.js';

useProcessGuard();
const newDir = tempDir('leasehold-no-false-stall-');

const TIMINGS = { lease_seconds: 2, heartbeat_seconds: 0.5, poll_seconds: 0.1 };
const STALL_MS = stallAfterMs(TIMINGS);

describe('children that claim nothing for good reasons are not stalled', () => {
  it(
    'busy slots, a paused class and a rate-limited class, each with jobs due for several times the bound',
    { timeout: 90_000 },
    async () => {
      const sup = await startSupervisor({
        dir: newDir(),
        classes: [
          { name: 'busy', handler: 'sleep', concurrency: 2, ...TIMINGS },
          { name: 'paused', handler: 'succeed', ...TIMINGS },
          { name: 'limited', handler: 'succeed', rate_limit: { max: 1, per_seconds: 600 }, ...TIMINGS },
        ],
      });
      await sup.queue.pause('paused');
      await sup.waitForEvent('CLASS_PAUSED', { class: 'paused' });
      const watchMs = 3 * STALL_MS;
      const long = { ms: watchMs + 2_000 };
      const busy = await sup.queue.enqueueMany([long, long, long].map((payload) => ({ class: 'busy', payload })));
      await sup.queue.enqueueMany(Array.from({ length: 3 }, () => ({ class: 'paused', payload: {} })));
      const limited = await sup.queue.enqueueMany(Array.from({ length: 3 }, () => ({ class: 'limited', payload: {} })));
      await sup.waitForJob(busy[0]!.id, 'RUNNING');
      await sup.waitForJob(busy[1]!.id, 'RUNNING');
      // The window's one start is spent once the first limited job is claimed: by its run, or by a claim its child
      // could not start within the margin (a loaded machine) and handed back, which spends the start all the same.
      await sup.waitForJob(limited[0]!.id, (details) => details.attempts.length > 0);

      await holdsFor('no child found stalled', () => sup.events('CHILD_STALLED').length === 0, { forMs: watchMs });
      // Jobs were due in each class all that time: a net that judged by claims alone would have fired.
      expect((await sup.queue.store.jobList({ status: 'QUEUED', limit: 10 })).length).toBeGreaterThanOrEqual(6);
      expect(await sup.stop()).toBe(0);
    },
  );
});
