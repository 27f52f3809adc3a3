/**
 * Log lines that tell the truth: every exit line says whether the supervisor
 * killed the child (and why), the child crashed, or it drained cleanly; each
 * verdict line gives attempt N of M and the rule that decided; a job's final
 * error code is the cause that ended it, and poison is only for jobs whose
 * runs take their child down.
 */
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, startWithJob, type LogRecord } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-truth-');

const messages = (records: LogRecord[]) => records.map((r) => r.msg as string);

describe('a job the supervisor kills for its runtime on every run', () => {
  it('ends TIMEOUT:MAX_RUNTIME once its retries run out, never WORKER:POISON; each exit line says it was killed for max_runtime', async () => {
    const { sup, id } = await startWithJob(
      newDir(),
      { name: 'slow', handler: 'sleep', max_runtime_seconds: 0.5, kill_grace_seconds: 0.3 },
      { payload: { ms: 60_000 }, maxRetries: 3 },
    );
    const { job, attempts } = await sup.waitForJob(id, 'FAILED', 60_000);
    expect(job.error_code).toBe('TIMEOUT:MAX_RUNTIME');
    expect(attempts.map((a) => a.error_code)).toEqual(Array(4).fill('TIMEOUT:MAX_RUNTIME'));
    expect(attempts[0]?.error_detail).toMatch(/^child killed by the supervisor \(max_runtime: /);

    // The last kill's exit line may come after its take-back is written: waited for, not assumed.
    const exits = await waitFor('an exit line for each of the 4 kills', () => {
      const lines = sup.events('CHILD_EXITED', { class: 'slow' });
      return lines.length >= 4 ? lines : undefined;
    });
    for (const exit of exits.slice(0, 4)) {
      expect(exit.reason).toBe('max_runtime');
      expect(exit.msg).toMatch(/^child exited: killed by the supervisor \(max_runtime: /);
      expect(exit.msg).not.toContain('stopped cleanly');
    }
    const verdicts = sup
      .logEvents()
      .filter((r) => r.job_id === id && (r.event === 'JOB_RECOVERED' || r.event === 'JOB_DEAD_LETTERED'));
    expect(messages(verdicts)).toEqual([
      expect.stringMatching(/^job \d+ taken back \(TIMEOUT:MAX_RUNTIME\): attempt 1 of 4, retries left; retry at /),
      expect.stringMatching(/: attempt 2 of 4, retries left; /),
      expect.stringMatching(/: attempt 3 of 4, retries left; /),
      expect.stringMatching(
        /^job \d+ taken back \(TIMEOUT:MAX_RUNTIME\) and dead-lettered: attempt 4 of 4, no retries left$/,
      ),
    ]);
    const workers = await sup.allChildren('slow');
    expect(
      workers.filter((w) => w.exited_at !== null).every((w) => w.state === 'killed'),
      'the registry records the kill',
    ).toBe(true);
    // The fifth child, the fourth one's replacement: the shutdown drains it.
    await waitFor('a fifth child ready', () => sup.events('CHILD_READY', { class: 'slow' }).length >= 5);
    expect(await sup.stop()).toBe(0);
    expect(sup.events('CHILD_EXITED', { class: 'slow', reason: 'drained' })).toHaveLength(1);
    expect(sup.events('CHILD_EXITED', { reason: 'drained' })[0]?.msg).toBe('child exited: drained cleanly (shutdown)');
  });
});

describe('a job whose runs take its child down', () => {
  it('is poison after 3 crashes in a row, and its line says so, not "no retries left"', async () => {
    const sup = await startSupervisor({ dir: newDir(), classes: [{ name: 'poison', handler: 'exit' }] });
    const { id } = await sup.queue.enqueue({ class: 'poison', payload: {}, maxRetries: 5 });
    const { job } = await sup.waitForJob(id, 'FAILED', 30_000);
    expect(job.error_code).toBe('WORKER:POISON');
    for (const exit of sup.events('CHILD_EXITED', { class: 'poison' }).slice(0, 3)) {
      expect(exit.reason).toBe('crashed');
      expect(exit.msg).toMatch(/^child exited: crashed: exit code 1/);
    }
    const dead = await sup.waitForEvent('JOB_DEAD_LETTERED', { job_id: id });
    expect(dead.msg).toMatch(
      /^job \d+ taken back \(WORKER:POISON\) and dead-lettered: attempt 3 of 6, poison: it took down its child 3 times in a row$/,
    );
    expect(dead.msg).not.toContain('no retries left');
    expect(await sup.stop()).toBe(0);
  });
});

describe("a child's own verdicts", () => {
  it('retry and dead letter give attempt N of M and the rule: retries left, no retries left, not retryable', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [
        { name: 'flaky', handler: 'throws' },
        { name: 'bad', handler: 'non-retryable' },
      ],
    });
    const { id: flaky } = await sup.queue.enqueue({ class: 'flaky', payload: {}, maxRetries: 1 });
    const { id: bad } = await sup.queue.enqueue({ class: 'bad', payload: {}, maxRetries: 4 });
    await sup.waitForJob(flaky, 'FAILED');
    await sup.waitForJob(bad, 'FAILED');
    const retried = await sup.waitForEvent('JOB_RETRY_SCHEDULED', { job_id: flaky });
    expect(retried.msg).toMatch(
      /^job \d+ failed \(UPSTREAM:UNAVAILABLE\), retry scheduled: attempt 1 of 2, retries left$/,
    );
    expect(retried).toMatchObject({ run: 1, runs_allowed: 2, rule: 'retries left' });
    expect((await sup.waitForEvent('JOB_DEAD_LETTERED', { job_id: flaky })).msg).toMatch(
      /dead-lettered: attempt 2 of 2, no retries left$/,
    );
    expect((await sup.waitForEvent('JOB_DEAD_LETTERED', { job_id: bad })).msg).toMatch(
      /dead-lettered: attempt 1 of 5, not retryable$/,
    );
    expect(await sup.stop()).toBe(0);
  });
});
