/**
 * Issue 15, a full disk: the SQLite database lives on a small tmpfs, and a
 * filler file takes its last byte while jobs run. While it lasts, /healthz
 * answers 503 naming the database and the full disk, no child crashes or is
 * killed, no class is disabled, the supervisor stays up. Once the filler is
 * deleted, every job SUCCEEDED, once, and /healthz is 200 again.
 *
 * Needs root (mount -t tmpfs); the mount is undone after the test, also when
 * it fails.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  dbErrorsByKind,
  expectAllSucceededOnce,
  expectCleanExits,
  expectNoLinePerFailedQuery,
  expectOutagesLogged,
  health,
  httpBase,
  troubles,
  waitAllEnded,
} from '../helpers/fault-checks.js';
import { fillUp, useTmpfs } from '../helpers/faults.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
// After the guard: its afterEach runs first, so the mount goes even when the guard finds leftovers.
const tmpfs = useTmpfs();
const newDir = tempDir('leasehold-faults-full-');

/** How long the disk stays full: well past a lease and three heartbeats (2 s + 3 × 0.5 s), so a kill or a crash loop would show. */
const FULL_FOR_MS = 8_000;

describe('SQLite on a filesystem that fills up', () => {
  it(
    'while it is full: 503 naming the database, no crash loop; after: every job SUCCEEDED once',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const dbDir = path.join(dir, 'db');
      // Room for the database and its WAL; the filler takes the rest. The log and the handlers' records stay outside.
      await tmpfs.mount(dbDir, '32m');
      const recordFile = path.join(dir, 'seen.jsonl');
      const sup = await startSupervisor({
        dir,
        database: path.join(dbDir, 'queue.db'),
        http: { port: 0 },
        classes: [
          {
            name: 'work',
            handler: 'lease-watch',
            processes: 2,
            max_retries: 5,
            restart: { max_restarts: 3, within_seconds: 60 },
          },
        ],
      });
      const base = await httpBase(sup);
      expect(await health(base)).toMatchObject({ status: 200, body: { status: 'ok' } });
      const jobs = await sup.queue.enqueueMany(
        Array.from({ length: 80 }, () => ({ class: 'work', payload: { ms: 100, recordFile }, maxRetries: 5 })),
      );
      const ids = jobs.map((job) => job.id);
      await waitFor(
        'the children to be working',
        async () => (await sup.queue.store.jobList({ status: 'SUCCEEDED', limit: 10 })).length >= 4,
      );

      const filler = path.join(dbDir, 'filler');
      const filledAt = Date.now();
      let queuedWhenFull = 0;
      try {
        const bytes = fillUp(filler);
        queuedWhenFull = (await sup.queue.store.jobList({ status: 'QUEUED', limit: 1_000 })).length;
        console.log(`filler took ${(bytes / 1048576).toFixed(1)} MiB; ${queuedWhenFull} jobs still queued`);
        // Topped up on every probe: whatever SQLite gives back, the disk stays full.
        const unhealthy = await waitFor(
          '/healthz to answer 503',
          async () => {
            fillUp(filler);
            const answer = await health(base);
            return answer?.status === 503 ? answer : undefined;
          },
          { timeoutMs: 20_000, intervalMs: 200 },
        ).catch(async (error: unknown) => {
          throw new Error(`${(error as Error).message}; it answers ${JSON.stringify(await health(base))}`);
        });
        expect(unhealthy.body).toMatchObject({ status: 'unavailable', dependency: 'database' });
        expect(String(unhealthy.body.reason)).toMatch(/disk.*full|full.*disk|no space/i);

        while (Date.now() < filledAt + FULL_FOR_MS) {
          fillUp(filler);
          expect(sup.exited(), `the supervisor exited while the disk was full:\n${sup.output().slice(-3000)}`).toBe(
            false,
          );
          await sleep(250);
        }
        // Still unhealthy while it lasts, and nothing died of it.
        expect(await health(base)).toMatchObject({
          status: 503,
          body: { status: 'unavailable', dependency: 'database' },
        });
        expect(troubles(sup)).toEqual([]);
      } finally {
        rmSync(filler, { force: true });
      }
      // The fault really held up work.
      expect(queuedWhenFull).toBeGreaterThan(0);

      const details = await waitAllEnded(sup, ids, 45_000);
      expectAllSucceededOnce(details);
      expect(sup.exited()).toBe(false);
      expect(troubles(sup)).toEqual([]);
      await waitFor('/healthz to answer 200 again', async () => (await health(base))?.status === 200, {
        timeoutMs: 15_000,
        intervalMs: 200,
      });

      // One outage per process that noticed, of kind disk_full, recovered; counted in the metric, not in lines.
      await expectOutagesLogged(sup, { kind: 'disk_full' });
      expect((await dbErrorsByKind(base)).disk_full ?? 0).toBeGreaterThan(0);
      expectNoLinePerFailedQuery(sup);

      expect(await sup.stop()).toBe(0);
      expectCleanExits(sup, 2);
    },
  );
});
