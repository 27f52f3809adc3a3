/**
 * A step of the wall clock (an NTP jump of ±30 s) on a SQLite host, mid-run:
 * the supervisor and its children run under libfaketime, whose offset the
 * test moves through a file; the monotonic clock stays true. Leases and
 * run_at are on the file's shared timeline, not the wall clock, so a step
 * forward takes back no live lease, a step back leaves no retry late, and no
 * job runs twice. The supervisor logs the step (CLOCK_OFFSET).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAKETIME_LIBRARY } from '../helpers/faketime.js';
import { handlerStarts, SHORT_LEASE_WORK } from '../helpers/effects.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type ClassSpec, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-clock-step-');

const STEP_SECONDS = 30;

/** A supervisor whose wall clock (and its children's) is this file's offset, re-read at each reading. */
async function steppableSupervisor(
  dir: string,
  classes: ClassSpec[],
): Promise<{ sup: SupervisorHandle; step: (offset: string) => void }> {
  const offsetFile = path.join(dir, 'faketime-offset');
  writeFileSync(offsetFile, '+0\n');
  const sup = await startSupervisor({
    dir,
    classes,
    env: {
      LD_PRELOAD: FAKETIME_LIBRARY,
      FAKETIME_TIMESTAMP_FILE: offsetFile,
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    },
  });
  return { sup, step: (offset) => writeFileSync(offsetFile, `${offset}\n`) };
}

/** Every job SUCCEEDED at its first attempt, none was taken back, and each handler began once. */
async function expectEachRanOnce(sup: SupervisorHandle, jobs: readonly { id: number }[], effectsFile: string) {
  for (const job of jobs) {
    const details = await sup.waitForJob(job.id, 'SUCCEEDED', 60_000);
    expect(
      details.attempts.map((attempt) => [attempt.status, attempt.error_code]),
      `job ${job.id}`,
    ).toEqual([['SUCCEEDED', null]]);
  }
  expect(sup.events('JOB_RECOVERED')).toEqual([]);
  expect(handlerStarts(effectsFile)).toEqual(jobs.map((job) => job.id));
}

describe('a step of the wall clock on SQLite', () => {
  it(
    'forward 30 s mid-run: no live lease is taken back, each job runs once, the step is logged',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const effectsFile = path.join(dir, 'effects.jsonl');
      const { sup, step } = await steppableSupervisor(dir, [SHORT_LEASE_WORK]);
      const jobs = await sup.queue.enqueueMany(
        Array.from({ length: 8 }, () => ({ class: 'work', payload: { ms: 2_500, effectsFile }, maxRetries: 3 })),
      );
      await waitFor(
        'two jobs running',
        async () => (await sup.queue.store.jobList({ status: 'RUNNING', limit: 10 })).length >= 2,
      );
      step(`+${STEP_SECONDS}s`);

      await expectEachRanOnce(sup, jobs, effectsFile);
      const warning = await sup.waitForEvent('CLOCK_OFFSET', { level: 'warn' }, 20_000);
      expect(warning.offset_ms as number).toBeGreaterThan((STEP_SECONDS - 1) * 1000);
      expect(await sup.stop()).toBe(0);
    },
  );

  it(
    'back 30 s mid-run: leases are renewed, a retry falls due on time, each job runs once',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const effectsFile = path.join(dir, 'effects.jsonl');
      const flaky: ClassSpec = {
        name: 'flaky',
        handler: 'fail-first',
        max_retries: 1,
        backoff: { base_seconds: 3, max_seconds: 3, jitter: false },
      };
      const { sup, step } = await steppableSupervisor(dir, [SHORT_LEASE_WORK, flaky]);
      const long = await sup.queue.enqueueMany(
        Array.from({ length: 2 }, () => ({ class: 'work', payload: { ms: 8_000, effectsFile }, maxRetries: 3 })),
      );
      const retried = await sup.queue.enqueue({ class: 'flaky', payload: {}, maxRetries: 1 });
      // Its first attempt failed: the retry is due 3 s later, on the clock that wrote its run_at.
      await sup.waitForJob(retried.id, (details) => details.attempts[0]?.status === 'FAILED');
      step(`-${STEP_SECONDS}s`);

      // Due 3 s after the failure, not 3 s plus the step: well within this deadline.
      const done = await sup.waitForJob(retried.id, 'SUCCEEDED', 15_000);
      expect(done.attempts.map((attempt) => attempt.status)).toEqual(['FAILED', 'SUCCEEDED']);
      const warning = await sup.waitForEvent('CLOCK_OFFSET', { level: 'warn' }, 20_000);
      expect(warning.offset_ms as number).toBeLessThan(-(STEP_SECONDS - 1) * 1000);
      await expectEachRanOnce(sup, long, effectsFile);
      expect(await sup.stop()).toBe(0);
    },
  );
});
