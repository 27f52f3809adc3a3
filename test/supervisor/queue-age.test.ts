/**
 * How long each class's queue has waited, and classes nothing serves, from a
 * real supervisor: `stats --json`, /metrics and the CLASS_UNSERVED log line.
 */
import { describe, expect, it } from 'vitest';
import { SUPERVISOR_HEARTBEAT_MS } from '../../src/queue/registry.js';
import { leasehold, leaseholdJson } from '../cli/helpers.js';
import { metricValue, parseMetrics } from '../helpers/metrics.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-queue-age-');

interface QueueJson {
  class: string;
  oldest_age_seconds: number;
  unserved: boolean;
}

async function queueOf(sup: SupervisorHandle, jobClass: string): Promise<QueueJson | undefined> {
  return (await leaseholdJson<{ queues?: QueueJson[] }>(['--config', sup.configFile, 'stats'])).queues?.find(
    (q) => q.class === jobClass,
  );
}

async function ageMetric(sup: SupervisorHandle, jobClass: string): Promise<number | undefined> {
  const { port } = await sup.waitForEvent('HTTP_LISTENING');
  const text = await (await fetch(`http://127.0.0.1:${port as number}/metrics`)).text();
  return metricValue(parseMetrics(text), 'leasehold_queue_oldest_age_seconds', { class: jobClass });
}

describe('queue age and unserved classes', () => {
  it("a paused class's oldest due job ages in stats and /metrics, and the class is not unserved", async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      http: { port: 0 },
      classes: [{ name: 'held', handler: 'succeed' }],
    });
    try {
      expect((await leasehold(['--config', sup.configFile, 'pause', 'held'])).exitCode).toBe(0);
      await sup.waitForEvent('CLASS_PAUSED', { class: 'held' });
      const { id } = await sup.queue.enqueue({ class: 'held', payload: {} });

      const first = await waitFor('an age in stats', async () => {
        const queue = await queueOf(sup, 'held');
        return queue !== undefined && queue.oldest_age_seconds > 0 && queue;
      });
      expect(first.unserved).toBe(false);
      await waitFor(
        'the age to grow in stats',
        async () => ((await queueOf(sup, 'held'))?.oldest_age_seconds ?? 0) > first.oldest_age_seconds,
      );

      const scraped = await waitFor('an age in /metrics', async () => {
        const age = await ageMetric(sup, 'held');
        return age !== undefined && age > 0 && age;
      });
      await waitFor('the age to grow in /metrics', async () => ((await ageMetric(sup, 'held')) ?? 0) > scraped);
      expect((await sup.queue.get(id))!.job.status).toBe('QUEUED');
      expect(sup.events('CLASS_UNSERVED')).toEqual([]);
    } finally {
      await sup.stop();
    }
  });

  it('a class no config serves: one CLASS_UNSERVED line within 30 s however many checks follow, and stats flags it', async () => {
    const sup = await startSupervisor({ dir: newDir(), classes: [{ name: 'ok', handler: 'succeed' }] });
    try {
      const served = await sup.queue.enqueue({ class: 'ok', payload: {} });
      await sup.queue.enqueue({ class: 'emial', payload: {} });
      const event = await sup.waitForEvent('CLASS_UNSERVED', { class: 'emial' }, 30_000);
      expect(event.level).toBe('warn');
      await sup.waitForJob(served.id, 'SUCCEEDED');

      // the supervisor refreshes its registry row on the interval it checks the classes on: three refreshes, two more checks at least
      const supervisorId = await sup.supervisorId();
      const seenAt = Date.parse(event.ts);
      await waitFor('three more supervisor heartbeats', async () => {
        const { workers } = await leaseholdJson<{ workers: { id: string; heartbeat_at: number }[] }>([
          '--db',
          sup.database,
          'workers',
        ]);
        return (workers.find((w) => w.id === supervisorId)?.heartbeat_at ?? 0) >= seenAt + 3 * SUPERVISOR_HEARTBEAT_MS;
      });
      expect(sup.events('CLASS_UNSERVED')).toHaveLength(1);

      expect(await queueOf(sup, 'emial')).toMatchObject({ unserved: true });
      expect(await queueOf(sup, 'ok')).toMatchObject({ unserved: false, oldest_age_seconds: 0 });
      expect((await leasehold(['--config', sup.configFile, 'stats'])).stdout).toMatch(
        /^emial +1 +\S+ +UNSERVED: no live worker on any host$/m,
      );
    } finally {
      await sup.stop();
    }
  });
});
