/**
 * Issue 15, an outage: PostgreSQL is stopped (pg_ctlcluster, fast shutdown)
 * for twice the lease while a long job and a short job run, then started.
 * Nothing is committed twice or after its lease ran out; every job ends; the
 * long job's handler, whose lease ran out in the dark, saw its signal aborted
 * with LEASE:LOST before the job was claimed again; the supervisor never
 * exited and killed no child; /healthz named the database meanwhile.
 *
 * Stops the shared server: run under `flock -x /tmp/leasehold-pg.lock`. The
 * server is started again in a finally and in an afterEach.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  dbErrorsByKind,
  expectAbortedBeforeNextClaim,
  expectCleanExits,
  expectCommittedOnce,
  expectNoLinePerFailedQuery,
  expectNothingCommittedAfterLease,
  expectOutagesLogged,
  health,
  httpBase,
  readHandlerRecords,
  troubles,
  waitAllEnded,
} from '../helpers/fault-checks.js';
import { startPostgres, stopPostgres, usePostgresRestore } from '../helpers/faults.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
// After the guard: runs before it, so the guard can read the workers table.
usePostgresRestore();
const schemas = schemaPool('lh_faults_outage');
const newDir = tempDir('leasehold-faults-outage-');

const LEASE_SECONDS = 2;
const OUTAGE_MS = 2 * LEASE_SECONDS * 1000;

describe('PostgreSQL stopped for twice the lease, then started', () => {
  it(
    'nothing committed twice or late, every job ends, the lost lease aborts the handler before the job is handed out again',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const recordFile = path.join(dir, 'seen.jsonl');
      const sup = await startSupervisor({
        dir,
        database: pgUrl(schemas.next()),
        http: { port: 0 },
        classes: [
          {
            name: 'work',
            handler: 'lease-watch',
            processes: 2,
            lease_seconds: LEASE_SECONDS,
            heartbeat_seconds: 0.5,
            max_retries: 3,
          },
        ],
      });
      const base = await httpBase(sup);
      // One child each: a job that outlives the outage and its lease, and one that returns during the outage.
      const long = (
        await sup.queue.enqueue({ class: 'work', payload: { ms: 2 * OUTAGE_MS, recordFile }, maxRetries: 3 })
      ).id;
      const short = (
        await sup.queue.enqueue({ class: 'work', payload: { ms: OUTAGE_MS / 2, recordFile }, maxRetries: 3 })
      ).id;
      const held = await waitFor('both handlers started, their jobs RUNNING', async () => {
        const running = await sup.queue.store.jobList({ status: 'RUNNING', limit: 10 });
        const started = new Set(
          readHandlerRecords(recordFile)
            .filter((s) => s.kind === 'start')
            .map((s) => s.id),
        );
        return running.length === 2 && started.has(long) && started.has(short) ? running : undefined;
      });
      const heldTokens = new Map(held.map((job) => [job.id, job.lease_token!]));

      let stoppedAt = 0;
      let healthDuring: Awaited<ReturnType<typeof health>>;
      try {
        await stopPostgres();
        stoppedAt = Date.now();
        // What /healthz says in the dark; checked once the server is back.
        healthDuring = await waitFor(
          '/healthz to answer 503',
          async () => {
            const answer = await health(base);
            return answer?.status === 503 ? answer : undefined;
          },
          { timeoutMs: OUTAGE_MS - 1_000, intervalMs: 100 },
        ).catch(() => health(base));
        await sleep(stoppedAt + OUTAGE_MS - Date.now());
      } finally {
        await startPostgres();
      }
      const restartedAt = Date.now();
      console.log(`PostgreSQL down ${restartedAt - stoppedAt} ms (lease ${LEASE_SECONDS} s)`);
      expect(sup.exited(), sup.output().slice(-3000)).toBe(false);

      const details = await waitAllEnded(sup, [long, short], 60_000);
      for (const { job } of details)
        expect(['SUCCEEDED', 'FAILED', 'CANCELLED'], `job ${job.id}`).toContain(job.status);
      expectCommittedOnce(details);
      expect(sup.exited()).toBe(false);
      // The health watch did not take the database's absence for dead children.
      expect(troubles(sup)).toEqual([]);

      // No renewal could land in the dark: nothing committed under a lease that ran out there.
      expectNothingCommittedAfterLease(details, heldTokens, stoppedAt, LEASE_SECONDS * 1000);
      // The long job's handler ran through the outage: aborted with LEASE:LOST, before the next claim.
      const seen = readHandlerRecords(recordFile);
      const { abortedAt, claimedAgainAt } = expectAbortedBeforeNextClaim(
        details.find((d) => d.job.id === long)!,
        heldTokens.get(long)!,
        seen,
      );
      console.log(
        `long job: signal aborted ${abortedAt - stoppedAt} ms into the outage; claimed again ${claimedAgainAt - abortedAt} ms after`,
      );

      // /healthz named the database while it was away, and the errors were counted.
      expect(healthDuring, '/healthz during the outage').toMatchObject({
        status: 503,
        body: { status: 'unavailable', dependency: 'database' },
      });
      expect((await dbErrorsByKind(base)).connection ?? 0).toBeGreaterThan(0);
      expect(await health(base)).toMatchObject({ status: 200, body: { status: 'ok' } });

      // One outage, one line each way per process that noticed it, and no line per failed query.
      const outages = await expectOutagesLogged(sup, { kind: 'connection' });
      for (const { job } of details) {
        const holder = seen.find((s) => s.kind === 'start' && s.token === heldTokens.get(job.id))!;
        expect([...outages.keys()], `the child that held job ${job.id} noticed`).toContain(`child ${holder.pid}`);
      }
      expectNoLinePerFailedQuery(sup);

      expect(await sup.stop()).toBe(0);
      expectCleanExits(sup, 2);
    },
  );
});
