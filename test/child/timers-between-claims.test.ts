/**
 * A child draining a deep queue of jobs that never wait (no I/O, SQLite's
 * writes synchronous while no writer meets another) still turns its event
 * loop between claims: its timers fire, and so would its pings and
 * heartbeats. Before, the claims, jobs and outcomes of the whole queue ran
 * as one chain of promise callbacks.
 */
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-timers-between-claims-');
const JOBS = 2_000;

describe('a child draining jobs that never wait', () => {
  it('fires its timers between claims: the last job sees more firings than the first', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'instant', handler: 'timer-ticks', claim_batch: 64, poll_seconds: 30 }],
    });
    const jobs = await sup.queue.enqueueMany(Array.from({ length: JOBS }, () => ({ class: 'instant' })));
    const first = await sup.waitForJob(jobs[0]!.id, 'SUCCEEDED');
    const last = await sup.waitForJob(jobs[JOBS - 1]!.id, 'SUCCEEDED');
    const ticks = (details: typeof first) => (details.job.result as { ticks: number }).ticks;
    expect(ticks(last), 'interval firings seen by the last job, more than by the first').toBeGreaterThan(ticks(first));
    await sup.stop();
  });
});
