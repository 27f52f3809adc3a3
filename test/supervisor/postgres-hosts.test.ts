/**
 * Several hosts, one PostgreSQL queue: two supervisors on this machine with
 * different host identities (one by the config's `host:`, one by
 * LEASEHOLD_HOST). One is SIGKILLed mid-run; the other finishes every job,
 * each committed once, and never takes back the dead host's jobs by pid:
 * those come back through the orphaned children handing them back, or
 * through lease expiry and the sweeper.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { Queue } from '../../src/queue/queue.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import type { JobRow } from '../../src/store/types.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';
import { onCleanup, useProcessGuard, waitForExit } from '../helpers/processes.js';
import { startSupervisor, type ClassSpec } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { claimJobs } from '../helpers/fenced-writes.js';

useProcessGuard();
const schemas = schemaPool('lh_hosts');
const newDir = tempDir('leasehold-pg-hosts-');

interface Effect {
  kind: 'start' | 'done';
  id: number;
  attempt: number;
  token: string;
  pid: number;
  ts: number;
}

function readEffects(file: string): Effect[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Effect);
}

/** A pid no process can have: above the kernel's pid_max. */
function impossiblePid(): number {
  return Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) + 1_000;
}

const WORK: ClassSpec = {
  name: 'work',
  handler: 'effects',
  processes: 3,
  lease_seconds: 2,
  heartbeat_seconds: 0.5,
  max_retries: 10,
};

describe('two hosts sharing one PostgreSQL queue', () => {
  it(
    'SIGKILL one supervisor mid-run: the other finishes every job, each committed once, without touching the dead host by pid',
    { timeout: 120_000 },
    async () => {
      const dir = newDir();
      const database = pgUrl(schemas.next());
      const effectsFile = path.join(dir, 'effects.jsonl');
      const a = await startSupervisor({ dir, database, host: 'host-a', classes: [WORK] });
      const b = await startSupervisor({ dir, database, env: { LEASEHOLD_HOST: 'host-b' }, classes: [WORK] });
      const [aId, bId] = [await a.supervisorId(), await b.supervisorId()];
      expect(aId).toMatch(/^host-a:\d+:[0-9a-f]+$/);
      expect(bId).toMatch(/^host-b:\d+:[0-9a-f]+$/);
      const ownedBy = (supervisorId: string) => (ownerId: string | null) =>
        ownerId?.startsWith(`${supervisorId}/`) === true;
      const byA = ownedBy(aId);
      const byB = ownedBy(bId);

      const store = b.queue.store;
      const jobs = await b.queue.enqueueMany(
        Array.from({ length: 40 }, (_, i) => ({
          class: 'work',
          payload: { ms: 1_000 + (i % 5) * 250, effectsFile },
          maxRetries: 10,
        })),
      );
      const ids = jobs.map((job) => job.id);
      expect(ids).toHaveLength(40);

      // Kill host A while its children run jobs.
      const heldByA = await waitFor('host A children running 2 jobs or more', async () => {
        const running = (await store.jobList({ status: 'RUNNING', limit: 100 })).filter((job) => byA(job.owner_id));
        return running.length >= 2 ? running : undefined;
      });
      const aChildren = await a.children('work');
      expect(aChildren.map((child) => child.host)).toEqual(['host-a', 'host-a', 'host-a']);
      a.kill('SIGKILL');
      const killedAt = Date.now();
      expect(await a.waitForExit(5_000)).toMatchObject({ signal: 'SIGKILL' });

      // Its children notice and exit on their own (the orphan path), handing their jobs back.
      for (const child of aChildren)
        expect(await waitForExit(child.pid, 10_000), `host A child ${child.pid} exits on its own`).toBe(true);
      const orphansGoneMs = Date.now() - killedAt;

      // Host B finishes everything.
      const finished = await waitFor(
        'every job SUCCEEDED',
        async () => {
          const rows = await Promise.all(ids.map((id) => store.jobGet({ id })));
          return rows.every((row) => row?.status === 'SUCCEEDED') ? (rows as JobRow[]) : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      const drainedMs = Date.now() - killedAt;

      // Each job committed once: one SUCCEEDED attempt, the last one; the row's token is that attempt's, and the
      // result was written under it by a handler that finished under it.
      const effects = readEffects(effectsFile);
      const doneTokens = new Set(effects.filter((e) => e.kind === 'done').map((e) => e.token));
      const comebacks: string[] = [];
      for (const job of finished) {
        const attempts = await store.attemptList({ jobId: job.id });
        expect(
          attempts.filter((attempt) => attempt.status === 'SUCCEEDED'),
          `job ${job.id}`,
        ).toHaveLength(1);
        const last = attempts[attempts.length - 1]!;
        expect(last.status, `job ${job.id}`).toBe('SUCCEEDED');
        expect(job.lease_token, `job ${job.id}`).toBe(last.lease_token);
        expect(JSON.parse(job.result ?? 'null')).toMatchObject({ token: job.lease_token, attempt: last.attempt });
        expect(doneTokens.has(job.lease_token!), `job ${job.id}: a handler finished under the committed token`).toBe(
          true,
        );
        // No attempt of host A's children was ended by a pid check of host B.
        for (const attempt of attempts.filter((x) => byA(x.owner_id))) {
          expect(attempt.error_code, `job ${job.id} attempt ${attempt.attempt}`).not.toBe('WORKER:CRASHED');
          if (attempt.status !== 'SUCCEEDED') comebacks.push(`${job.id}#${attempt.attempt}:${attempt.error_code}`);
        }
      }
      // The jobs A held when it died were finished by B (or, in a photo finish, committed by A's child under the lease it held).
      for (const held of heldByA) {
        const job = finished.find((row) => row.id === held.id)!;
        expect(
          byB(job.owner_id) || job.lease_token === held.lease_token,
          `job ${held.id} finished by ${job.owner_id}`,
        ).toBe(true);
      }

      // B never took back A's children's jobs as crashed (the pid path), at start or later.
      const crashedRecoveries = b.events('JOB_RECOVERED').filter((record) => record.code === 'WORKER:CRASHED');
      expect(crashedRecoveries).toEqual([]);
      const workers = await store.workerList({ includeExited: true, limit: 100 });
      const hostsOf = (supervisorId: string) => [
        ...new Set(workers.filter((w) => w.id === supervisorId || w.supervisor_id === supervisorId).map((w) => w.host)),
      ];
      expect(hostsOf(aId)).toEqual(['host-a']);
      expect(hostsOf(bId)).toEqual(['host-b']);

      // Each supervisor says how far its clock is from the server's, at start.
      const offset = await b.waitForEvent('CLOCK_OFFSET');
      expect(offset).toMatchObject({ level: 'info', warn_ms: 1_000 });
      // One host, one clock: the offset is the anchor's error, which depends on the load (logged, not asserted),
      // and stays far under the lease whatever the load.
      console.log(
        `CLOCK_OFFSET measured on the server's own host: ${String(offset.offset_ms)} ms (${String(offset.level)})`,
      );
      expect(Math.abs(offset.offset_ms as number)).toBeLessThan(1_000);
      expect(b.events('SUPERVISOR_STARTED')[0]).toMatchObject({ host: 'host-b' });

      const uncommitted = effects.filter((e) => e.kind === 'done').length - finished.length;
      console.log(
        `host A SIGKILLed holding jobs ${heldByA.map((job) => job.id).join(', ')}; its children gone after ${orphansGoneMs} ms; ` +
          `all ${finished.length} jobs SUCCEEDED ${drainedMs} ms after the kill; host A attempts that did not succeed: ${comebacks.join(' ') || 'none'}; ` +
          `handlers that finished without committing: ${uncommitted}`,
      );
      expect(await b.stop()).toBe(0);
    },
  );

  it(
    "another host's workers with pids that mean nothing here are left to the lease; this host's dead ones are taken back at once",
    { timeout: 60_000 },
    async () => {
      const dir = newDir();
      const schema = schemas.next();
      const database = pgUrl(schema);
      const store = await PostgresStore.open({ database, clock: systemClock });
      onCleanup(() => store.close());
      const deadPid = impossiblePid();
      // A supervisor and child of each host, recorded alive, whose pids are not alive on this machine.
      for (const host of ['host-a', 'host-b']) {
        const supervisorId = `${host}:${deadPid}:000000`;
        await store.workerRegister({
          id: supervisorId,
          kind: 'supervisor',
          host,
          supervisorId: null,
          pid: deadPid,
          class: null,
          state: 'ready',
          restarts: 0,
        });
        await store.workerRegister({
          id: `${supervisorId}/work.0.1`,
          kind: 'child',
          host,
          supervisorId,
          pid: deadPid,
          class: 'work',
          state: 'busy',
          restarts: 0,
        });
      }
      const queue = new Queue(store, { actor: 'test' });
      const payload = { ms: 10, effectsFile: path.join(dir, 'effects.jsonl') };
      const queued = [
        (await queue.enqueue({ class: 'work', payload, maxRetries: 3 })).id,
        (await queue.enqueue({ class: 'work', payload, maxRetries: 3 })).id,
      ];
      // Longer than any start-up under load: the other host's job must still be held when the start-up is checked.
      const leaseMs = 60_000;
      const held = new Map<string, { id: number; leaseExpiresAt: number }>();
      for (const [index, host] of ['host-a', 'host-b'].entries()) {
        const ownerId = `${host}:${deadPid}:000000/work.0.1`;
        const [job] = await claimJobs(store, { classes: ['work'], ownerId, limit: 1, leaseMs });
        expect(job?.id).toBe(queued[index]);
        await store.jobStart({ id: job!.id, leaseToken: job!.leaseToken, leaseMs });
        held.set(host, { id: job!.id, leaseExpiresAt: (await store.jobGet({ id: job!.id }))!.lease_expires_at! });
      }
      const elsewhereJob = held.get('host-a')!;
      const hereJob = held.get('host-b')!;

      const b = await startSupervisor({
        dir,
        database,
        env: { LEASEHOLD_HOST: 'host-b' },
        classes: [{ ...WORK, processes: 1 }],
      });
      await b.waitForEvent('SUPERVISOR_STARTED');
      // Its own host's dead child: taken back at start-up by pid, at once.
      const recovered = await b.waitForEvent('JOB_RECOVERED', { job_id: hereJob.id });
      expect(recovered).toMatchObject({ code: 'WORKER:CRASHED', owner_id: `host-b:${deadPid}:000000/work.0.1` });
      // The other host's: untouched by the start-up, still held, its workers still recorded alive.
      expect(await store.jobGet({ id: elsewhereJob.id })).toMatchObject({
        status: 'RUNNING',
        owner_id: `host-a:${deadPid}:000000/work.0.1`,
      });
      expect((await store.workerListLiveOnHost({ host: 'host-a' })).map((w) => w.id).sort()).toEqual([
        `host-a:${deadPid}:000000`,
        `host-a:${deadPid}:000000/work.0.1`,
      ]);
      expect((await store.workerListLiveOnHost({ host: 'host-b' })).some((w) => w.pid === deadPid)).toBe(false);

      // Its lease runs out now (moved forward rather than waited for), and it comes back through the sweeper.
      const admin = await adminClient(schema);
      onCleanup(() => admin.end());
      const { rows } = await admin.query<{ lease_expires_at: string }>(
        'UPDATE jobs SET lease_expires_at = $2 WHERE id = $1 AND status = $3 RETURNING lease_expires_at',
        [elsewhereJob.id, Date.now(), 'RUNNING'],
      );
      expect(rows).toHaveLength(1);
      elsewhereJob.leaseExpiresAt = Number(rows[0]!.lease_expires_at);
      const done = await b.waitForJob(elsewhereJob.id, 'SUCCEEDED', 30_000);
      expect(done.attempts.map((attempt) => [attempt.attempt, attempt.status, attempt.error_code])).toEqual([
        [1, 'FAILED', 'LEASE:EXPIRED'],
        [2, 'SUCCEEDED', null],
      ]);
      expect(done.attempts[0]!.finished_at).toBeGreaterThanOrEqual(elsewhereJob.leaseExpiresAt);
      expect((await b.waitForJob(hereJob.id, 'SUCCEEDED')).attempts.map((attempt) => attempt.error_code)).toEqual([
        'WORKER:CRASHED',
        null,
      ]);
      expect(await b.stop()).toBe(0);
    },
  );
});
