/**
 * A child that cannot run (SIGSTOPped, or stuck in a write transaction)
 * holds SQLite's write lock and its leases for as long as it lives; it
 * cannot run a SIGTERM handler either. The supervisor SIGKILLs it at once.
 */
import { describe, expect, it } from 'vitest';
import { isAlive, useProcessGuard, waitForExit } from '../helpers/processes.js';
import { startWithJob, waitForReplacement } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-stopped-');

/** How soon a stopped child must be gone, counted from the stop. */
const GONE_WITHIN_MS = 2_000;

describe('a stopped child', () => {
  it('SIGSTOPped while its job runs: SIGKILLed as unresponsive within 2 s, its grace not waited, its job blamed', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      // A grace far longer than the deadline: only a kill that skips it passes.
      { name: 'stopped', handler: 'sleep', heartbeat_seconds: 0.3, kill_grace_seconds: 5 },
      { payload: { ms: 60_000 }, maxRetries: 0 },
    );
    const pid = first!.pid!;
    await sup.waitForJob(id, 'RUNNING');

    process.kill(pid, 'SIGSTOP');
    const stoppedAt = Date.now();
    const gone = await waitForExit(pid, GONE_WITHIN_MS);
    console.log(`stopped child gone ${Date.now() - stoppedAt} ms after SIGSTOP`);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    expect(gone, `child ${pid} still there ${GONE_WITHIN_MS} ms after SIGSTOP`).toBe(true);

    const killed = await sup.waitForEvent('CHILD_KILLED', { pid });
    expect(killed.reason).toBe('unresponsive');
    const details = await sup.waitForJob(id, 'FAILED');
    expect(details.job.error_code).toBe('WORKER:UNRESPONSIVE');
    const { dead } = await waitForReplacement(sup, 'stopped', pid);
    expect(dead.exit_signal).toBe('SIGKILL');
    await waitFor('the replacement ready', async () => (await sup.children('stopped')).length === 1);
    await sup.stop();
  });
});
