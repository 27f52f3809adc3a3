/**
 * Issue 15, a lock-out: another process holds SQLite's write lock
 * (`BEGIN EXCLUSIVE`, as an operator's sqlite3 shell would) for well over
 * three busy timeouts, and longer than the lease and three heartbeats, while
 * jobs run and wait. No process crashes or is killed, the supervisor stays
 * up; the handlers whose leases ran out under the lock saw LEASE:LOST before
 * their jobs were claimed again, and nothing was committed under those
 * leases; once the lock is released the work resumes: every job SUCCEEDED,
 * once.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { BUSY_TIMEOUT_MS } from '../../src/store/sqlite/connection.js';
import {
  dbErrorsByKind,
  expectAbortedBeforeNextClaim,
  expectAllSucceededOnce,
  expectCleanExits,
  expectNoLinePerFailedQuery,
  expectNothingCommittedAfterLease,
  expectOutagesLogged,
  httpBase,
  readHandlerRecords,
  troubles,
  waitAllEnded,
} from '../helpers/fault-checks.js';
import { holdExclusiveLock, type LockHolder } from '../helpers/faults.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-faults-lock-');

const LEASE_SECONDS = 2;
const HEARTBEAT_SECONDS = 1;
/** Over 3 busy timeouts (whatever the build's is) and over lease + 3 heartbeats (5 s). */
const HOLD_MS = Math.max(10_000, 3 * BUSY_TIMEOUT_MS + 2_000);

describe('SQLite write-locked by another process', () => {
  it(
    `BEGIN EXCLUSIVE held ${HOLD_MS / 1000} s while jobs run and wait: no crash, no kill, LEASE:LOST before the next claim, every job SUCCEEDED once after the release`,
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const recordFile = path.join(dir, 'seen.jsonl');
      const sup = await startSupervisor({
        dir,
        http: { port: 0 },
        classes: [
          {
            name: 'work',
            handler: 'lease-watch',
            processes: 2,
            lease_seconds: LEASE_SECONDS,
            heartbeat_seconds: HEARTBEAT_SECONDS,
            max_retries: 5,
          },
        ],
      });
      const base = await httpBase(sup);
      // Two jobs that run past their leases under the lock, then short ones that wait behind it.
      const long = await sup.queue.enqueueMany(
        [0, 1].map(() => ({ class: 'work', payload: { ms: 3 * LEASE_SECONDS * 1000, recordFile }, maxRetries: 5 })),
      );
      const short = await sup.queue.enqueueMany(
        Array.from({ length: 30 }, () => ({ class: 'work', payload: { ms: 50, recordFile }, maxRetries: 5 })),
      );
      const ids = [...long, ...short].map((job) => job.id);
      const held = await waitFor('both long jobs RUNNING, their handlers started', async () => {
        const running = (await sup.queue.store.jobList({ status: 'RUNNING', limit: 10 })).filter((job) =>
          long.some((l) => l.id === job.id),
        );
        const started = new Set(readHandlerRecords(recordFile).map((r) => r.token));
        return running.length === 2 && running.every((job) => started.has(job.lease_token!)) ? running : undefined;
      });
      const heldTokens = new Map(held.map((job) => [job.id, job.lease_token!]));

      const holder: LockHolder = await holdExclusiveLock(sup.database);
      try {
        // Hold it, watching that the supervisor lives through it.
        while (Date.now() < holder.lockedAt + HOLD_MS) {
          expect(sup.exited(), `the supervisor exited during the lock-out:\n${sup.output().slice(-3000)}`).toBe(false);
          await sleep(250);
        }
      } finally {
        await holder.release();
      }
      const heldMs = Date.now() - holder.lockedAt;
      console.log(
        `write lock held ${heldMs} ms (busy timeout ${BUSY_TIMEOUT_MS} ms, lease ${LEASE_SECONDS} s, heartbeat ${HEARTBEAT_SECONDS} s)`,
      );

      // No child was killed for a silence the lock caused, none crashed.
      expect(troubles(sup)).toEqual([]);

      const details = await waitAllEnded(sup, ids, 60_000);
      expectAllSucceededOnce(details);
      expect(sup.exited()).toBe(false);
      expect(troubles(sup)).toEqual([]);

      // The long jobs' leases ran out under the lock: nothing committed under them, the handlers aborted first.
      expectNothingCommittedAfterLease(details, heldTokens, holder.lockedAt, LEASE_SECONDS * 1000);
      const records = readHandlerRecords(recordFile);
      for (const [id, token] of heldTokens)
        expectAbortedBeforeNextClaim(
          details.find((d) => d.job.id === id)!,
          token,
          records,
        );

      // One outage per process that noticed, of kind locked, recovered; counted in the metric, not in lines.
      await expectOutagesLogged(sup, { kind: 'locked' });
      expect((await dbErrorsByKind(base)).locked ?? 0).toBeGreaterThan(0);
      expectNoLinePerFailedQuery(sup);

      expect(await sup.stop()).toBe(0);
      expectCleanExits(sup, 2);
    },
  );
});
