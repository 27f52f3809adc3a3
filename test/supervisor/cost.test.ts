/**
 * What jobs cost, end to end: real children run a CPU-burning class, a
 * memory-hungry class and a no-op class (and, apart, a class killed for its
 * memory), then `leasehold stats --json` ranks them, `leasehold show` prints
 * each attempt's figures, and /metrics counts them.
 */
import { describe, expect, it } from 'vitest';
import type { CostReport } from '../../src/reports/cost.js';
import type { AttemptRow } from '../../src/store/types.js';
import { leasehold, leaseholdJson } from '../cli/helpers.js';
import { metricValue, parseMetrics, type Sample } from '../helpers/metrics.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-cost-');

const MIB = 1024 * 1024;
/** CPU time (not wall time) each burn job spends in its handler: whatever the machine's speed, the meter must count at least this. */
const BURN_MS = 400;
/** What each hungry job holds, and for how long (a few of the child's 0.5 s ticks). */
const HUNGRY_MB = 200;
const HUNGRY_MS = 1200;

async function scrape(sup: SupervisorHandle): Promise<Sample[]> {
  const { port } = await sup.waitForEvent('HTTP_LISTENING');
  return parseMetrics(await (await fetch(`http://127.0.0.1:${port as number}/metrics`)).text());
}

async function attemptOf(sup: SupervisorHandle, id: number): Promise<AttemptRow> {
  const [attempt] = (await sup.queue.get(id))!.attempts;
  return attempt!;
}

describe('what jobs cost, measured by real children', () => {
  it('ranks classes and attempts by the CPU and the peak memory their children measured, in stats, show and /metrics', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      http: { port: 0 },
      classes: [
        { name: 'burn', handler: 'cpu-burn' },
        { name: 'hungry', handler: 'memory-hungry' },
        { name: 'noop', handler: 'succeed' },
      ],
    });
    const enqueue = async (jobClass: string, payload: unknown) =>
      (await sup.queue.enqueue({ class: jobClass, payload })).id;
    const burn = [await enqueue('burn', { ms: BURN_MS }), await enqueue('burn', { ms: BURN_MS })];
    const hungry = [await enqueue('hungry', { mb: HUNGRY_MB, ms: HUNGRY_MS })];
    const noop = [await enqueue('noop', {}), await enqueue('noop', {}), await enqueue('noop', {})];
    for (const id of [...burn, ...hungry, ...noop]) await sup.waitForJob(id, 'SUCCEEDED');

    for (const id of burn) expect((await attemptOf(sup, id)).cpu_ms).toBeGreaterThanOrEqual(BURN_MS);
    expect((await attemptOf(sup, hungry[0]!)).peak_rss_bytes).toBeGreaterThanOrEqual(HUNGRY_MB * MIB);
    for (const id of noop)
      expect(await attemptOf(sup, id)).toMatchObject({
        cpu_ms: expect.any(Number),
        peak_rss_bytes: expect.any(Number),
      });

    // The rankings follow what the children measured, read back here rather than assumed: touching 200 MiB costs the
    // hungry job 400-700 ms of CPU on these VMs (page faults are system time), as much as a burn job or more.
    const byClass = { burn, hungry, noop };
    const measured = await Promise.all(
      Object.entries(byClass).flatMap(([jobClass, ids]) =>
        ids.map(async (id) => ({ jobClass, id, cpuMs: (await attemptOf(sup, id)).cpu_ms! })),
      ),
    );
    const mostCpu = measured.reduce((most, attempt) => (attempt.cpuMs > most.cpuMs ? attempt : most));
    const classCpu = (jobClass: string) =>
      measured.filter((attempt) => attempt.jobClass === jobClass).reduce((sum, attempt) => sum + attempt.cpuMs, 0);

    const { cost } = await leaseholdJson<{ cost: CostReport }>(['--db', sup.database, 'stats']);
    expect(cost.by_cpu.map((row) => row.class)).toEqual(Object.keys(byClass).sort((a, b) => classCpu(b) - classCpu(a)));
    expect(cost.by_memory.map((row) => row.class)[0]).toBe('hungry');
    expect(cost.by_cpu.find((row) => row.class === 'burn')).toMatchObject({ attempts: 2 });
    expect(cost.by_cpu.find((row) => row.class === 'burn')!.cpu_ms).toBeGreaterThanOrEqual(2 * BURN_MS);
    expect(cost.slowest[0]).toMatchObject({ job_id: mostCpu.id, class: mostCpu.jobClass, cpu_ms: mostCpu.cpuMs });
    const slowestCpu = cost.slowest.map((row) => row.cpu_ms);
    expect(slowestCpu).toEqual([...slowestCpu].sort((a, b) => b - a));
    expect(cost.hungriest[0]).toMatchObject({ job_id: hungry[0], class: 'hungry', status: 'SUCCEEDED' });

    const shown = await leasehold(['--db', sup.database, 'show', String(burn[0])]);
    expect(shown.stdout).toMatch(/#\s+STATUS\s+OWNER\s+STARTED\s+TOOK\s+CPU\s+PEAK RSS/);
    expect(shown.stdout).toMatch(/SUCCEEDED .* \d+(\.\d+)?(ms|s) +\d+(\.\d+)? MiB/);

    // fed by the children's success tallies
    const samples = await waitFor('the last outcomes in /metrics', async () => {
      const now = await scrape(sup);
      return metricValue(now, 'leasehold_job_peak_rss_bytes_count', { class: 'noop' }) === noop.length
        ? now
        : undefined;
    });
    expect(metricValue(samples, 'leasehold_job_cpu_seconds_total', { class: 'burn' })).toBeGreaterThanOrEqual(
      (2 * BURN_MS) / 1000,
    );
    expect(metricValue(samples, 'leasehold_job_peak_rss_bytes_count', { class: 'hungry' })).toBe(1);
    expect(metricValue(samples, 'leasehold_job_peak_rss_bytes_sum', { class: 'hungry' })).toBeGreaterThanOrEqual(
      HUNGRY_MB * MIB,
    );
    expect(
      metricValue(samples, 'leasehold_job_peak_rss_bytes_bucket', { class: 'hungry', le: String(128 * MIB) }),
    ).toBe(0);
    await sup.stop();
  });

  it("a child killed for its memory: the supervisor's samples give the culprit's attempt its peak, over the cap", async () => {
    const capMb = 150;
    const sup = await startSupervisor({
      dir: newDir(),
      http: { port: 0 },
      classes: [{ name: 'hog', handler: 'memory-hog', max_memory_mb: capMb, kill_grace_seconds: 0.5 }],
    });
    const { id } = await sup.queue.enqueue({ class: 'hog', payload: { mb: 600 }, maxRetries: 0 });
    const { attempts } = await sup.waitForJob(id, 'FAILED');
    expect(attempts).toMatchObject([{ status: 'FAILED', error_code: 'RESOURCE:MEMORY', cpu_ms: expect.any(Number) }]);
    expect(attempts[0]!.peak_rss_bytes).toBeGreaterThan(capMb * MIB);

    // fed by the supervisor's own figures: the child could not report them
    const samples = await waitFor('the culprit in /metrics', async () => {
      const now = await scrape(sup);
      return metricValue(now, 'leasehold_job_peak_rss_bytes_count', { class: 'hog' }) === 1 ? now : undefined;
    });
    expect(metricValue(samples, 'leasehold_job_peak_rss_bytes_sum', { class: 'hog' })).toBe(
      attempts[0]!.peak_rss_bytes,
    );
    expect(metricValue(samples, 'leasehold_job_cpu_seconds_total', { class: 'hog' })).toBeCloseTo(
      attempts[0]!.cpu_ms! / 1000,
      6,
    );
    await sup.stop();
  });
});
