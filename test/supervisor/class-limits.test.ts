/**
 * A class's max_retries and backoff hold for every job of the class, however
 * it was enqueued: through the library (which has no config), the CLI with
 * only a database, the CLI with the config, or a schedule. Only an enqueue
 * that set its own max_retries keeps it. One real supervisor, real children.
 */
import { describe, expect, it } from 'vitest';
import type { EventRow } from '../../src/store/types.js';
import { leasehold, leaseholdJson } from '../cli/helpers.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-class-limits-');

/** The delay each RETRY_SCHEDULED put before the next attempt (its run_at minus when it was written). */
const retryDelays = (events: EventRow[]) =>
  events
    .filter((e) => e.event === 'RETRY_SCHEDULED')
    .map((e) => (JSON.parse(e.detail ?? '{}') as { run_at: number }).run_at - e.ts);

describe("a class's limits, however its jobs were enqueued", () => {
  it("library, CLI (--db or --config) and schedule jobs fail after the class's attempts, with its backoff; an enqueue's own max_retries wins", async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [
        {
          name: 'flaky',
          handler: 'throws',
          max_retries: 2,
          backoff: { base_seconds: 0.3, max_seconds: 0.3, jitter: false },
        },
        { name: 'crashes', handler: 'exit', max_retries: 1 },
        { name: 'tick', handler: 'throws', max_retries: 1, schedules: [{ name: 'every-second', cron: '* * * * * *' }] },
      ],
    });
    const enqueueCli = async (...args: string[]) => (await leaseholdJson<{ id: number }>(args)).id;
    const byProducer = {
      library: (await sup.queue.enqueue({ class: 'flaky', payload: {} })).id,
      cliWithDb: await enqueueCli('--db', sup.database, 'enqueue', 'flaky', '--allow-unknown-class'),
      cliWithConfig: await enqueueCli('--config', sup.configFile, 'enqueue', 'flaky'),
    };
    const ownLimit = (await sup.queue.enqueue({ class: 'flaky', payload: {}, maxRetries: 0 })).id;
    // taken back by the supervisor when its child exits, not failed by the child
    const crashing = (await sup.queue.enqueue({ class: 'crashes', payload: {} })).id;

    for (const [producer, id] of Object.entries(byProducer)) {
      const { job, attempts, events } = await sup.waitForJob(id, 'FAILED');
      expect({ producer, attempts: job.attempts, max_retries: job.max_retries }).toEqual({
        producer,
        attempts: 3,
        max_retries: 2,
      });
      expect(attempts.map((a) => a.error_code)).toEqual([
        'UPSTREAM:UNAVAILABLE',
        'UPSTREAM:UNAVAILABLE',
        'UPSTREAM:UNAVAILABLE',
      ]);
      // the class's backoff (300 ms, no jitter), not the default (1 s base, jittered)
      expect({ producer, delays: retryDelays(events) }).toEqual({ producer, delays: [300, 300] });
    }
    expect((await sup.waitForJob(ownLimit, 'FAILED')).job).toMatchObject({
      attempts: 1,
      max_retries: 0,
      max_retries_from_class: 0,
    });
    const crashed = await sup.waitForJob(crashing, 'FAILED');
    expect(crashed.job).toMatchObject({ attempts: 2, max_retries: 1, error_code: 'WORKER:CRASHED' });

    const scheduled = await waitFor(
      'a scheduled tick job FAILED',
      async () => (await sup.queue.list({ class: 'tick', status: 'FAILED' }))[0],
    );
    expect(scheduled).toMatchObject({ attempts: 2, max_retries: 1, max_retries_from_class: 1 });
    await sup.stop();
  });

  it("show and list say that a job not claimed yet takes its class's limit, and what it was at the last claim", async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'flaky', handler: 'throws', max_retries: 2 }],
    });
    const waiting = (await sup.queue.enqueue({ class: 'flaky', payload: {}, delay: 3600 })).id;
    const own = (await sup.queue.enqueue({ class: 'flaky', payload: {}, delay: 3600, maxRetries: 4 })).id;
    const ran = (await sup.queue.enqueue({ class: 'flaky', payload: {} })).id;
    await sup.waitForJob(ran, 'FAILED');
    await sup.stop();
    const C = ['--config', sup.configFile];

    const shown = async (id: number) => (await leasehold([...C, 'show', String(id)])).stdout;
    expect(await shown(waiting)).toMatch(
      /^attempts: +0 of at most the class's max_retries \+ 1, read when a worker claims it$/m,
    );
    expect(await shown(own)).toMatch(/^attempts: +0 of at most 5$/m);
    expect(await shown(ran)).toMatch(/^attempts: +3 of at most 3 \(the class's max_retries when last claimed\)$/m);
    const json = await leaseholdJson<{ job: Record<string, unknown> }>([...C, 'show', String(waiting)]);
    expect(json.job).toMatchObject({ attempts: 0, max_retries_from_class: 1 });

    const listed = await leaseholdJson<{ jobs: Record<string, unknown>[] }>([...C, 'list']);
    expect(listed.jobs.map((job) => [job.id, job.max_retries_from_class])).toEqual([
      [ran, 1],
      [own, 0],
      [waiting, 1],
    ]);
    const table = (await leasehold([...C, 'list'])).stdout.split('\n');
    const rowOf = (id: number) => table.find((line) => line.trimStart().startsWith(`${id} `));
    expect(rowOf(waiting)).toMatch(/\s0\/class\s/);
    expect(rowOf(own)).toMatch(/\s0\/5\s/);
    expect(rowOf(ran)).toMatch(/\s3\/3\s/);
  });
});
