/**
 * An idle child on SQLite is woken by a commit to the file (a watch on its
 * WAL), not by its poll. The watch ends at the first commit it sees and is
 * armed again only while claims find nothing (child/claim-watch.ts), so
 * that a busy child watches no commit: after each busy spell, the next
 * enqueue must still wake it. With poll_seconds 30, a child that missed the wake-up
 * would start the job 15 to 45 s late.
 */
import { describe, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-idle-wake-');
/** Far below the poll: only a wake-up starts the jobs this soon, whatever the load. */
const WOKEN_WITHIN_MS = 10_000;

describe('an idle child on SQLite', () => {
  it('is woken by the next enqueue after each busy spell, not by its poll', { timeout: 90_000 }, async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'quick', handler: 'succeed', processes: 2, claim_batch: 16, poll_seconds: 30 }],
    });
    // Spells of work, each followed by a single job enqueued once the spell is done (the children idle or about to be).
    for (const size of [1, 200, 1, 500, 1]) {
      const jobs = await sup.queue.enqueueMany(Array.from({ length: size }, () => ({ class: 'quick' })));
      for (const job of jobs) await sup.waitForJob(job.id, 'SUCCEEDED', WOKEN_WITHIN_MS);
    }
    await sup.stop();
  });
});
