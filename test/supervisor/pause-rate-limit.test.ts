/**
 * Pause and rate limits with real supervisors and children: a paused class
 * starts nothing (jobs running at the pause finish) until it is resumed; a
 * rate limit holds across two supervisors (two host identities) sharing one
 * database (a SQLite file; a PostgreSQL schema), counted on the claims the
 * database granted and on the handlers' starts; a job a child could not start
 * in time after its claim is handed back. Run it under the PostgreSQL lock.
 */
import { describe, expect, it } from 'vitest';
import { countRows, leasehold } from '../cli/helpers.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { holdsFor, waitFor } from '../helpers/wait.js';
import { holdExclusiveLock } from '../helpers/faults.js';
import { START_MARGIN_MS } from '../../src/store/rate-limit.js';

useProcessGuard();
const newDir = tempDir('leasehold-pause-');
const schemas = schemaPool('lh_rate');

/** The most of `times` that fall in any window [t, t + windowMs). */
function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let first = 0;
  for (let last = 0; last < sorted.length; last++) {
    while (sorted[last]! - sorted[first]! >= windowMs) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe('pause and resume', () => {
  it(
    'a paused class starts none of its queued jobs for 5 s while the running one finishes; after resume they all run',
    { timeout: 60_000 },
    async () => {
      const sup = await startSupervisor({
        dir: newDir(),
        classes: [{ name: 'work', handler: 'sleep', processes: 2, poll_seconds: 0.1 }],
      });
      const cli = (...args: string[]) => leasehold(['--config', sup.configFile, ...args]);
      const { id: running } = await sup.queue.enqueue({ class: 'work', payload: { ms: 1_500 } });
      await sup.waitForJob(running, 'RUNNING');

      const paused = await cli('pause', 'work');
      expect(paused).toMatchObject({ exitCode: 0, stderr: '' });
      expect(paused.stdout).toMatch(/^class work paused/);
      await sup.waitForEvent('CLASS_PAUSED', { class: 'work', paused_by: 'cli' });
      const queued = await sup.queue.enqueueMany(
        Array.from({ length: 10 }, (_, n) => ({ class: 'work', payload: { ms: n } })),
      );
      const attemptsOfQueued = () =>
        countRows(sup.database, `SELECT count(*) FROM job_attempts WHERE job_id >= ?`, queued[0]!.id);

      await sup.waitForJob(running, 'SUCCEEDED');
      await holdsFor('no attempt of a queued job while the class is paused', () => attemptsOfQueued() === 0, {
        forMs: 5_000,
      });

      const resumed = await cli('resume', 'work');
      expect(resumed).toMatchObject({ exitCode: 0, stdout: 'class work resumed' });
      await sup.waitForEvent('CLASS_RESUMED', { class: 'work', resumed_by: 'cli' });
      for (const { id } of queued) await sup.waitForJob(id, 'SUCCEEDED');
      // Each ran once (max_retries 0). Under load a child may hand back a claim it could not start
      // (a release: an attempt row, no run spent), so runs are counted as runsOf counts them.
      expect(countRows(sup.database, `SELECT sum(attempts - releases) FROM jobs WHERE id >= ?`, queued[0]!.id)).toBe(
        10,
      );
      expect(await sup.stop()).toBe(0);
    },
  );
});

describe('rate limits', () => {
  const databases: [string, () => string | undefined][] = [
    ['SQLite', () => undefined],
    ['PostgreSQL', () => pgUrl(schemas.next())],
  ];
  it.each(databases)(
    '%s: 10 per second across 2 supervisors of 4 children: no one-second window holds more than 10 claims or 10 handler starts',
    { timeout: 90_000 },
    async (driver, databaseOf) => {
      const dir = newDir();
      const database = databaseOf();
      const work = {
        name: 'work',
        handler: 'succeed',
        processes: 4,
        concurrency: 2,
        rate_limit: { max: 10, per_seconds: 1 },
      };
      const a = await startSupervisor({ dir, database, host: 'host-a', classes: [work] });
      const b = await startSupervisor({ dir, database, host: 'host-b', classes: [work] });
      const jobs = await a.queue.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ class: 'work', payload: { n } })));
      for (const { id } of jobs) await a.waitForJob(id, 'SUCCEEDED', 30_000);

      const claims = (await Promise.all(jobs.map(({ id }) => a.queue.store.attemptList({ jobId: id })))).flat();
      const owners = new Set(claims.map((attempt) => attempt.owner_id.split(':')[0]));
      expect(owners).toEqual(new Set(['host-a', 'host-b']));
      // an attempt's started_at is its claim's time: a claim counts as a start
      const claimedAt = claims.map((attempt) => attempt.started_at);
      const startedAt = (await Promise.all(jobs.map(({ id }) => a.queue.store.jobGet({ id })))).map(
        (job) => job!.started_at!,
      );
      console.log(
        `${driver}: busiest 1 s window: ${busiestWindow(claimedAt, 1_000)} claims, ${busiestWindow(startedAt, 1_000)} handler starts (${claims.length} claims)`,
      );
      expect(busiestWindow(claimedAt, 1_000)).toBeLessThanOrEqual(10);
      // A handler starts within START_MARGIN_MS of its claim, and claims are held to 10 per window plus that margin.
      expect(busiestWindow(startedAt, 1_000)).toBeLessThanOrEqual(10);

      expect(await a.stop()).toBe(0);
      expect(await b.stop()).toBe(0);
    },
  );

  it('SQLite: a job whose claim came back later than the start margin is handed back unstarted, then runs', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'work', handler: 'succeed', rate_limit: { max: 10, per_seconds: 1 } }],
    });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {}, delay: 1 });
    const dueAt = (await sup.queue.get(id))!.job.run_at;
    // The child asks for work while another process holds the write lock; its claim gets the job once the lock is gone, too late to start it.
    const lock = await holdExclusiveLock(sup.database);
    try {
      await waitFor(
        'the job to be due, and then some',
        () => (Date.now() > dueAt + 5 * START_MARGIN_MS ? true : undefined),
        { timeoutMs: 10_000 },
      );
    } finally {
      await lock.release();
    }
    const { attempts } = await sup.waitForJob(id, 'SUCCEEDED');
    expect(attempts.map((a) => [a.status, a.error_code])).toEqual([
      ['CANCELLED', 'LEASE:RELEASED'],
      ['SUCCEEDED', null],
    ]);
    expect(attempts[0]!.error_detail).toContain(`not started within ${START_MARGIN_MS} ms of its claim`);
    expect(await sup.stop()).toBe(0);
  });
});
