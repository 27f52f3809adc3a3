/**
 * Issue 15, dropped connections: under load (2 children, 300 short jobs) every
 * backend of the queue (the supervisor's and its children's, found by the
 * application_name they get from PGAPPNAME; never the test's own) is
 * terminated in ten rounds 2 s apart, at least one of them while jobs still
 * wait. No process crashes, the supervisor stays up, and every job SUCCEEDED
 * exactly once.
 *
 * Run under `flock -s /tmp/leasehold-pg.lock` (PostgreSQL is shared).
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  expectAllSucceededOnce,
  expectCleanExits,
  expectNoLinePerFailedQuery,
  expectOutagesLogged,
  troubles,
  waitAllEnded,
} from '../helpers/fault-checks.js';
import { terminateBackends } from '../helpers/faults.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const schemas = schemaPool('lh_faults_kill');
const newDir = tempDir('leasehold-faults-kill-');

const JOBS = 300;
const KILL_EVERY_MS = 2_000;
const KILL_ROUNDS = 10;

describe('PostgreSQL backends terminated under load', () => {
  it(
    'ten rounds 2 s apart: no process crashes, the supervisor stays up, every job SUCCEEDED once',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const schema = schemas.next();
      const appName = `leasehold_${schema}`.slice(0, 63);
      const effectsFile = path.join(dir, 'effects.jsonl');
      const sup = await startSupervisor({
        dir,
        database: pgUrl(schema),
        env: { PGAPPNAME: appName },
        classes: [
          { name: 'work', handler: 'effects', processes: 2, lease_seconds: 2, heartbeat_seconds: 0.5, max_retries: 5 },
        ],
      });
      // 60-220 ms each (140 on average): two children are busy for about the 20 s of the kills.
      const jobs = await sup.queue.enqueueMany(
        Array.from({ length: JOBS }, (_, i) => ({
          class: 'work',
          payload: { ms: 60 + (i % 5) * 40, effectsFile },
          maxRetries: 5,
        })),
      );
      const ids = jobs.map((job) => job.id);
      await waitFor(
        'the children to be working',
        async () => (await sup.queue.store.jobList({ status: 'SUCCEEDED', limit: 10 })).length >= 4,
        {
          timeoutMs: 20_000,
        },
      );

      const killed: number[] = [];
      /** Rounds that cut the queue's connections while jobs still waited: the fault hit the queue under load. */
      let cutUnderLoad = 0;
      for (let round = 1; round <= KILL_ROUNDS; round++) {
        const waiting = (await sup.queue.store.jobList({ status: 'QUEUED', limit: 1 })).length;
        killed.push(await terminateBackends(appName));
        if (killed.at(-1)! > 0 && waiting > 0) cutUnderLoad++;
        expect(sup.exited(), `the supervisor exited after kill round ${round}:\n${sup.output().slice(-3000)}`).toBe(
          false,
        );
        await sleep(KILL_EVERY_MS);
      }
      const unfinishedAfterKills = (await sup.queue.store.jobList({ status: 'QUEUED', limit: 1_000 })).length;
      console.log(
        `backends terminated per round: ${killed.join(' ')}; jobs still queued when the kills stopped: ${unfinishedAfterKills}`,
      );
      expect(cutUnderLoad).toBeGreaterThan(0);

      // No child crashed, was killed or restarted; no class stopped.
      expect(troubles(sup)).toEqual([]);

      const details = await waitAllEnded(sup, ids, 60_000);
      expectAllSucceededOnce(details);
      expect(sup.exited()).toBe(false);
      expect(troubles(sup)).toEqual([]);

      // Each cut a process noticed is one outage in the log, recovered, not a line per failed query. (A cut
      // mended by the next try need not be an outage: none noticed is fine.)
      const outages = await expectOutagesLogged(sup, {
        kind: 'connection',
        maxOutages: killed.length,
        required: false,
      });
      console.log(`outages logged: ${[...outages].map(([who, lines]) => `${who} ${lines.length / 2}`).join(', ')}`);
      expectNoLinePerFailedQuery(sup);

      expect(await sup.stop()).toBe(0);
      expectCleanExits(sup, 2);
    },
  );
});
