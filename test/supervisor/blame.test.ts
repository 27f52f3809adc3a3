/**
 * Who is charged when a child dies: the guarantees that any change to how
 * the supervisor learns which jobs a child runs (issue 32) must keep. Each
 * death is real (a blocked loop, a SIGKILL), and each check reads the
 * attempts that the store recorded.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobDetails } from '../../src/queue/queue.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, startWithJob, waitForReplacement } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-blame-');

const attemptsOf = (details: JobDetails) => details.attempts.map((a) => [a.attempt, a.status, a.error_code]);
const eventCount = (details: JobDetails, event: string) => details.events.filter((e) => e.event === event).length;

/** The JSON lines a fixture appended to `file` (none yet if it does not exist). */
function marks(file: string): { id: number; attempt: number }[] {
  try {
    return readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { id: number; attempt: number });
  } catch {
    return [];
  }
}

describe('blame: each death charges exactly the attempts that were running', () => {
  it('a handler that blocks the event loop from its first instruction: its child is killed, that attempt alone spends a retry', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      {
        name: 'blocks',
        handler: 'blocks-once',
        heartbeat_seconds: 0.5,
        lease_seconds: 5,
        max_runtime_seconds: 30,
        kill_grace_seconds: 0.5,
        max_retries: 1,
      },
      { payload: {}, maxRetries: 1 },
    );

    const done = await sup.waitForJob(id, 'SUCCEEDED', 30_000);
    expect(attemptsOf(done)).toEqual([
      [1, 'FAILED', 'WORKER:UNRESPONSIVE'],
      [2, 'SUCCEEDED', null],
    ]);
    expect(done.job.attempts).toBe(2);
    expect(eventCount(done, 'KILLED')).toBe(1);
    expect((await sup.waitForEvent('CHILD_KILLED', { class: 'blocks', pid: first!.pid })).reason).toBe('unresponsive');
    await sup.stop();
  });

  it('a SIGKILL within a millisecond of the start: the attempt is charged, once', async () => {
    const { sup, first, id } = await startWithJob(
      newDir(),
      { name: 'dies', handler: 'kill-self-once', max_retries: 1 },
      { payload: {}, maxRetries: 1 },
    );

    const done = await sup.waitForJob(id, 'SUCCEEDED');
    expect(attemptsOf(done)).toEqual([
      [1, 'FAILED', 'WORKER:CRASHED'],
      [2, 'SUCCEEDED', null],
    ]);
    expect(done.job.attempts).toBe(2);
    expect(eventCount(done, 'RECOVERED')).toBe(1);
    const { dead } = await waitForReplacement(sup, 'dies', first!.pid);
    expect(dead.exit_signal).toBe('SIGKILL');
    await sup.stop();
  });

  it('a SIGKILL with 4 slots busy: each of the 4 running attempts is charged, and no other job', async () => {
    const dir = newDir();
    const markFile = path.join(dir, 'starts.jsonl');
    const sup = await startSupervisor({
      dir,
      classes: [
        {
          name: 'four',
          handler: 'sleep',
          concurrency: 4,
          max_retries: 1,
          backoff: { base_seconds: 60, max_seconds: 60 },
        },
      ],
    });
    const [child] = await sup.waitForChildren('four', 1);
    const ids: number[] = [];
    for (let i = 0; i < 6; i++)
      ids.push((await sup.queue.enqueue({ class: 'four', payload: { ms: 60_000, markFile }, maxRetries: 1 })).id);

    // Kill once exactly the 4 started jobs are held: the 2 others were never claimed or were handed back.
    const held = async () =>
      (await Promise.all(ids.map((id) => sup.queue.get(id)))).filter(
        (d) => d!.job.status === 'RUNNING' || d!.job.status === 'CLAIMED',
      );
    const started = await waitFor('4 jobs started and only they held', async () => {
      const running = marks(markFile);
      return running.length === 4 && (await held()).length === 4 ? running.map((m) => m.id) : undefined;
    });
    process.kill(child!.pid, 'SIGKILL');
    await sup.waitForEvent('CHILD_EXITED', { class: 'four', pid: child!.pid });

    for (const id of started) {
      const details = await sup.waitForJob(id, (d) => d.attempts[0]?.status === 'FAILED');
      expect(attemptsOf(details)[0]).toEqual([1, 'FAILED', 'WORKER:CRASHED']);
      expect(details.job.attempts).toBe(1);
    }
    for (const id of ids.filter((id) => !started.includes(id))) {
      const details = (await sup.queue.get(id))!;
      expect(details.attempts.filter((a) => a.status === 'FAILED')).toEqual([]);
      expect(details.job.attempts - details.job.releases).toBeLessThanOrEqual(1);
    }
    await sup.stop();
  });

  it('a child killed after its outcome was written: nothing is charged, the job stays SUCCEEDED', async () => {
    const dir = newDir();
    const sup = await startSupervisor({
      dir,
      classes: [{ name: 'late', handler: 'dies-after-commit', max_retries: 1 }],
    });
    const [first] = await sup.waitForChildren('late', 1);
    const { id } = await sup.queue.enqueue({ class: 'late', payload: { database: sup.database }, maxRetries: 1 });

    const { dead } = await waitForReplacement(sup, 'late', first!.pid);
    expect(dead.exit_signal).toBe('SIGKILL');
    // CHILD_EXITED is logged once the take-back is done
    await sup.waitForEvent('CHILD_EXITED', { class: 'late', pid: first!.pid });
    const details = (await sup.queue.get(id))!;
    expect(details.job.status).toBe('SUCCEEDED');
    expect(attemptsOf(details)).toEqual([[1, 'SUCCEEDED', null]]);
    expect(details.job.attempts).toBe(1);
    expect(eventCount(details, 'RECOVERED')).toBe(0);
    await sup.stop();
  });

  it('per-attempt CPU and peak memory: within 10% of what the handler itself measured', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [
        { name: 'burn', handler: 'cpu-burn' },
        { name: 'hungry', handler: 'memory-hungry' },
      ],
    });
    const burn = await sup.queue.enqueue({ class: 'burn', payload: { ms: 200 } });
    const hungry = await sup.queue.enqueue({ class: 'hungry', payload: { mb: 100, ms: 300 } });

    const burnt = await sup.waitForJob(burn.id, 'SUCCEEDED');
    const seenCpuMs = (burnt.job.result as { cpu_ms: number }).cpu_ms;
    expect(seenCpuMs).toBeGreaterThanOrEqual(200);
    expect(Math.abs(burnt.attempts[0]!.cpu_ms! - seenCpuMs)).toBeLessThanOrEqual(0.1 * seenCpuMs);

    const held = await sup.waitForJob(hungry.id, 'SUCCEEDED');
    const seenRss = (held.job.result as { rss: number }).rss;
    expect(held.attempts[0]!.peak_rss_bytes).toBeGreaterThanOrEqual(0.9 * seenRss);
    await sup.stop();
  });
});
