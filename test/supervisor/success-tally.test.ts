/**
 * A child tells its successes in tallies, at most once a second: none of
 * them may go missing from /metrics when the child ends before the next
 * tally was due, here by a handler's process.exit right after them.
 */
import { describe, expect, it } from 'vitest';
import { metricValue, parseMetrics, type Sample } from '../helpers/metrics.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-tally-');

async function scrape(sup: SupervisorHandle): Promise<Sample[]> {
  const { port } = await sup.waitForEvent('HTTP_LISTENING');
  return parseMetrics(await (await fetch(`http://127.0.0.1:${port as number}/metrics`)).text());
}

describe('success tallies', () => {
  it('a child that exits right after its successes has told every one of them: counter, histogram count and buckets', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      http: { port: 0 },
      classes: [{ name: 'work', handler: 'succeed-or-exit', processes: 1 }],
    });
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await sup.queue.enqueue({ class: 'work', payload: {} })).id);
    const exiting = await sup.queue.enqueue({ class: 'work', payload: { exit: true }, maxRetries: 0 });
    await sup.waitForJob(exiting.id, 'FAILED');
    for (const id of ids) await sup.waitForJob(id, 'SUCCEEDED');

    const labels = { class: 'work', outcome: 'SUCCEEDED' };
    // A child's last messages may be read after its exit is seen: wait for them (the deadline fails the test).
    const samples = await waitFor('the crash and every success counted', async () => {
      const now = await scrape(sup);
      const counted =
        metricValue(now, 'leasehold_jobs_dead_lettered_total', { class: 'work' }) === 1 &&
        metricValue(now, 'leasehold_jobs_succeeded_total', { class: 'work' }) === ids.length;
      return counted ? now : undefined;
    });
    expect(metricValue(samples, 'leasehold_job_duration_seconds_count', labels)).toBe(ids.length);
    expect(metricValue(samples, 'leasehold_job_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(ids.length);
    // Peak memory is per class, not per outcome: the crashed attempt counts too when the supervisor sampled its child first.
    const peaks = metricValue(samples, 'leasehold_job_peak_rss_bytes_count', { class: 'work' }) ?? 0;
    expect(peaks).toBeGreaterThanOrEqual(ids.length);
    expect(peaks).toBeLessThanOrEqual(ids.length + 1);
    await sup.stop();
  });
});
