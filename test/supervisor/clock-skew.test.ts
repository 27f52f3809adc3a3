/**
 * Two hosts on one PostgreSQL queue, one of them with its wall clock 20 s
 * ahead (libfaketime, the monotonic clock left true): leases are judged on
 * the server's clock, guarantee 11 (Time is the database's), so the fast
 * host takes back no live lease of its peer, both finish jobs, and no
 * handler runs twice. The fast host says so while it runs: CLOCK_OFFSET and
 * the gauge leasehold_clock_offset_seconds.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobRow } from '../../src/store/types.js';
import { FAKETIME_LIBRARY } from '../helpers/faketime.js';
import { handlerStarts, SHORT_LEASE_WORK } from '../helpers/effects.js';
import { metricValue, parseMetrics } from '../helpers/metrics.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const schemas = schemaPool('lh_skew');
const newDir = tempDir('leasehold-clock-skew-');

const SKEW_SECONDS = 20;

describe('a host whose clock is 20 s ahead, on PostgreSQL', () => {
  it(
    'takes back no live lease of its peer; both hosts finish jobs, each handler runs once',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const database = pgUrl(schemas.next());
      const effectsFile = path.join(dir, 'effects.jsonl');
      const a = await startSupervisor({ dir, database, host: 'host-a', classes: [SHORT_LEASE_WORK] });
      const b = await startSupervisor({
        dir,
        database,
        host: 'host-b',
        http: { port: 0 },
        env: { LD_PRELOAD: FAKETIME_LIBRARY, FAKETIME: `+${SKEW_SECONDS}s`, FAKETIME_DONT_FAKE_MONOTONIC: '1' },
        classes: [SHORT_LEASE_WORK],
      });
      const [aId, bId] = [await a.supervisorId(), await b.supervisorId()];

      const store = a.queue.store;
      const jobs = await a.queue.enqueueMany(
        Array.from({ length: 60 }, () => ({ class: 'work', payload: { ms: 600, effectsFile }, maxRetries: 3 })),
      );
      const ids = jobs.map((job) => job.id);

      const finished = await waitFor(
        'every job SUCCEEDED',
        async () => {
          const rows = await Promise.all(ids.map((id) => store.jobGet({ id })));
          return rows.every((row) => row?.status === 'SUCCEEDED') ? (rows as JobRow[]) : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 200 },
      );

      // One attempt each: nothing was taken back, by a sweeper or anyone.
      for (const job of finished) {
        const attempts = await store.attemptList({ jobId: job.id });
        expect(
          attempts.map((attempt) => [attempt.status, attempt.error_code]),
          `job ${job.id}`,
        ).toEqual([['SUCCEEDED', null]]);
      }
      expect([...a.events('JOB_RECOVERED'), ...b.events('JOB_RECOVERED')]).toEqual([]);
      // Each handler ran once.
      expect(handlerStarts(effectsFile)).toEqual(ids);
      // Both hosts did work.
      const ownedBy = (supervisorId: string) => finished.filter((job) => job.owner_id?.startsWith(`${supervisorId}/`));
      expect(ownedBy(aId).length).toBeGreaterThan(0);
      expect(ownedBy(bId).length).toBeGreaterThan(0);

      // The fast host knows it is off, while it runs: the gauge, and a warning.
      const { port } = await b.waitForEvent('HTTP_LISTENING');
      const offsetSeconds = await waitFor('the offset gauge in /metrics', async () => {
        const text = await (await fetch(`http://127.0.0.1:${port as number}/metrics`)).text();
        return metricValue(parseMetrics(text), 'leasehold_clock_offset_seconds');
      });
      expect(offsetSeconds).toBeGreaterThan(SKEW_SECONDS - 1);
      expect(offsetSeconds).toBeLessThan(SKEW_SECONDS + 1);

      // The warning says, with how far ahead its clock is (host minus database).
      const warning = b.events('CLOCK_OFFSET').find((record) => record.level === 'warn');
      expect(warning?.offset_ms as number).toBeGreaterThan((SKEW_SECONDS - 1) * 1000);
      expect(a.events('CLOCK_OFFSET').filter((record) => record.level === 'warn')).toEqual([]);
      console.log(`host A finished ${ownedBy(aId).length} jobs, host B (20 s ahead) ${ownedBy(bId).length}`);

      expect(await b.stop()).toBe(0);
      expect(await a.stop()).toBe(0);
    },
  );
});
