/**
 * The child's run loop under a real supervisor (issue 11): a handler that
 * blocks its child's event loop still spends its retries; a fast job never
 * waits behind a slow one of its child; a finished job's outcome is written
 * while a later job of its child runs; a cancel reaches a claimed job that
 * has not started. Each test asserts outcomes and structure, not speed: the
 * deadlines are generous.
 */
import { describe, expect, it } from 'vitest';
import type { JobDetails } from '../../src/queue/queue.js';
import type { JobView } from '../../src/queue/queue.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor, waitForReplacement, type ClassSpec, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-run-loop-');

const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELLED'];
/** The codes a busy loop's attempt may fail with, whichever of the supervisor, the runtime limit or the sweeper sees it first. */
const BLOCKED_CODES = ['WORKER:UNRESPONSIVE', 'TIMEOUT:MAX_RUNTIME', 'LEASE:EXPIRED'];

/** What a test asserts about a job: its status and its attempts as [status, code]. */
function summary(details: JobDetails): { status: string; attempts: [string, string | null][] } {
  return { status: details.job.status, attempts: details.attempts.map((a) => [a.status, a.error_code]) };
}

/**
 * Wait until the job ended, or has had more attempts than `maxRetries`
 * allows (then it can no longer end as it should: no need to wait longer).
 */
async function settledOrOverspent(
  sup: SupervisorHandle,
  id: number,
  maxRetries: number,
  timeoutMs: number,
): Promise<JobDetails> {
  return sup.waitForJob(id, (d) => TERMINAL.includes(d.job.status) || d.attempts.length > maxRetries + 1, timeoutMs);
}

/** A busy loop's job ends FAILED after max_retries + 1 attempts, each FAILED as blocked; none handed back as never started. */
function expectBlockedFailure(details: JobDetails, maxRetries: number): void {
  const seen = summary(details);
  const released = seen.attempts.filter(([, code]) => code === 'LEASE:RELEASED');
  expect(released, `attempts handed back as unstarted (no retry spent): ${JSON.stringify(seen)}`).toEqual([]);
  expect(seen.status, JSON.stringify(seen)).toBe('FAILED');
  expect(seen.attempts.length, JSON.stringify(seen)).toBe(maxRetries + 1);
  for (const [status, code] of seen.attempts) {
    expect(status, JSON.stringify(seen)).toBe('FAILED');
    expect(BLOCKED_CODES, JSON.stringify(seen)).toContain(code);
  }
}

/**
 * SIGTERM, then a second one once the shutdown began: the supervisor stops a
 * child that spins at once. A drain waits out shutdown grace plus kill grace
 * (3 + 5 s with the default class), and execa SIGKILLs the supervisor 5 s
 * after its SIGTERM, which would leave that child behind.
 */
async function stopForced(sup: SupervisorHandle): Promise<void> {
  sup.kill('SIGTERM');
  await sup.waitForEvent('SHUTDOWN_STARTED');
  await sup.stop();
}

/** One class of the `slow` fixture (payload.ms, respects its signal), one child, started and ready. */
async function startSlowClass(cls: Partial<ClassSpec> & { name: string }): Promise<SupervisorHandle> {
  return startSupervisor({ dir: newDir(), classes: [{ handler: 'slow', max_runtime_seconds: 120, ...cls }] });
}

/** Run `count` jobs of 0 ms to their end, so the child's handler is warm and its last claim found the queue empty. */
async function warmUp(sup: SupervisorHandle, cls: string, count = 20): Promise<void> {
  const jobs = await sup.queue.enqueueMany(
    Array.from({ length: count }, () => ({ class: cls, payload: { ms: 0 }, maxRetries: 0 })),
  );
  for (const { id } of jobs) await sup.waitForJob(id, 'SUCCEEDED');
}

interface JobSpec {
  payload: unknown;
  maxRetries: number;
}

/**
 * Enqueue, in one transaction, a job of 0 ms, then `slow` and `neighbour`
 * (in that order, or the other with `neighbourFirst`), then `more` jobs of
 * 0 ms, and wait until `slow` runs. Today's child, idle, claims the 0 ms job
 * alone and then two at once: `neighbour` shares a claim with `slow`. That is
 * how the faults are reproduced; the tests do not ask for it. Should a
 * hiccup split the two (the 0 ms job took over 5 ms), the round is cancelled
 * and tried again, at most 3 rounds in all.
 */
async function claimedWithSlow(
  sup: SupervisorHandle,
  cls: string,
  slow: JobSpec,
  neighbour: JobSpec,
  options: { more?: number; neighbourFirst?: boolean } = {},
): Promise<{ slow: JobView; neighbourId: number; moreIds: number[] }> {
  const fast = () => ({ payload: { ms: 0 }, maxRetries: 0 });
  const pair = options.neighbourFirst ? [neighbour, slow] : [slow, neighbour];
  for (let round = 1; ; round++) {
    const jobs = [fast(), ...pair, ...Array.from({ length: options.more ?? 0 }, fast)].map((job) => ({
      class: cls,
      ...job,
    }));
    const ids = (await sup.queue.enqueueMany(jobs)).map((job) => job.id);
    const [, first, second, ...moreIds] = ids as [number, number, number, ...number[]];
    const [slowId, neighbourId] = options.neighbourFirst ? [second, first] : [first, second];
    const running = (await sup.waitForJob(slowId, 'RUNNING')).job;
    const other = (await sup.queue.store.jobGet({ id: neighbourId }))!;
    // Claimed together; a neighbour behind the slow job must still be waiting (not handed back and claimed again).
    const together =
      other.owner_id === running.owner_id &&
      other.claimed_at === running.claimed_at &&
      (options.neighbourFirst || other.status === 'CLAIMED');
    if (together || round === 3) return { slow: running, neighbourId, moreIds };
    await sup.queue.store.jobCancel({ id: slowId, actor: 'test' });
    for (const id of ids) await sup.waitForJob(id, (d) => TERMINAL.includes(d.job.status), 30_000);
  }
}

describe('fault 1: a handler that blocks its event loop spends its retries', () => {
  it('with a short lease, heartbeat, runtime and sweeper interval: FAILED after max_retries + 1 attempts, none LEASE:RELEASED', async () => {
    const cls: ClassSpec = {
      name: 'spin',
      handler: 'busy-loop',
      lease_seconds: 2,
      heartbeat_seconds: 0.5,
      max_runtime_seconds: 2,
      kill_grace_seconds: 1,
      max_retries: 1,
    };
    const sup = await startSupervisor({ dir: newDir(), classes: [cls], sweeperIntervalSeconds: 1 });
    const { id } = await sup.queue.enqueue({ class: 'spin', payload: {}, maxRetries: 1 });

    const seen = await settledOrOverspent(sup, id, 1, 45_000);
    await stopForced(sup);
    expectBlockedFailure(seen, 1);
  }, 90_000);

  it('with the default class config and sweeper interval: FAILED after its one attempt, not LEASE:RELEASED', async () => {
    const cls: ClassSpec = { name: 'spin', handler: 'busy-loop', max_retries: 0, bare: true };
    const sup = await startSupervisor({ dir: newDir(), classes: [cls], sweeperIntervalSeconds: 'default' });
    // Defaults: a 30 s lease, a heartbeat every 10 s (3 missed: the child is killed, 5 s of grace, then
    // SIGKILL), a sweep every 10 s from the supervisor's start. A job claimed right at the start has its
    // lease run out just after a sweep, and the kill gets there first. Due 7 s past a sweep, its lease runs
    // out about 3 s before one, while the child is being killed: the sweeper sees the expired lease first.
    // Which of the two gets there first must not change the verdict.
    const sweepsFrom = Date.parse((await sup.waitForEvent('SUPERVISOR_STARTED')).ts);
    const { id } = await sup.queue.enqueue({ class: 'spin', payload: {}, maxRetries: 0, runAt: sweepsFrom + 7_000 });

    const seen = await settledOrOverspent(sup, id, 0, 100_000);
    await stopForced(sup);
    expectBlockedFailure(seen, 0);
  }, 150_000);
});

describe('fault 2: no head-of-line blocking', () => {
  it('2 children, fast jobs with a slow one every 100th: no fast job claimed before a slow job of its child started waits for it', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'mixed', handler: 'slow', processes: 2, concurrency: 1 }],
    });
    const SLOW_MS = 2_500;
    const requests = Array.from({ length: 400 }, (_, i) => ({
      class: 'mixed',
      payload: { ms: i % 100 === 50 ? SLOW_MS : 1 },
      maxRetries: 0,
    }));
    const ids = (await sup.queue.enqueueMany(requests)).map((job) => job.id);
    expect(ids).toHaveLength(400);

    const rows = await waitFor(
      'all 400 jobs to end',
      async () => {
        const all = await Promise.all(ids.map(async (id) => (await sup.queue.store.jobGet({ id }))!));
        return all.every((job) => TERMINAL.includes(job.status)) ? all : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    await sup.stop();
    expect(rows.filter((job) => job.status !== 'SUCCEEDED').map((job) => [job.id, job.status, job.error_code])).toEqual(
      [],
    );

    const slow = rows.filter((_, i) => i % 100 === 50);
    const fast = rows.filter((_, i) => i % 100 !== 50);
    // A fast job held by the child when its slow job started, and started after it: it waited behind it.
    const waitedBehind = slow.flatMap((s) =>
      fast
        .filter((f) => f.owner_id === s.owner_id && f.claimed_at! <= s.started_at! && f.started_at! > s.started_at!)
        .map((f) => ({ fast: f.id, behind: s.id, waited_ms: f.started_at! - f.claimed_at! })),
    );
    const worst = Math.max(0, ...waitedBehind.map((w) => w.waited_ms));
    expect({ waitedBehind: waitedBehind.length, worst_ms: worst, first: waitedBehind.slice(0, 3) }).toEqual({
      waitedBehind: 0,
      worst_ms: 0,
      first: [],
    });
  }, 120_000);
});

describe('fault 3: an outcome does not wait for the next job', () => {
  it('a fast job claimed together with a long one: SUCCEEDED while the long one runs, and stays so when the child is SIGKILLed', async () => {
    const sup = await startSlowClass({ name: 'batch' });
    await warmUp(sup, 'batch');
    const [child] = await sup.children('batch');
    const long = { payload: { ms: 60_000 }, maxRetries: 0 };
    const { slow: longRow, neighbourId: fastId } = await claimedWithSlow(
      sup,
      'batch',
      long,
      { payload: { ms: 0 }, maxRetries: 1 },
      { neighbourFirst: true },
    );

    // the fast job ran before the long one, claimed with it; its outcome must not wait for it
    const succeededWhileLongRan = await sup.waitForJob(fastId, 'SUCCEEDED', 5_000).then(
      () => true,
      () => false,
    );

    process.kill(child!.pid, 'SIGKILL');
    const longEnd = await sup.waitForJob(longRow.id, 'FAILED', 30_000);
    const fastJob = await sup.waitForJob(fastId, (d) => TERMINAL.includes(d.job.status), 30_000);
    await waitForReplacement(sup, 'batch', child!.pid);
    await sup.stop();

    // the long job was the one running: its attempt counts (no retries: FAILED)
    expect(summary(longEnd)).toMatchObject({ status: 'FAILED', attempts: [['FAILED', expect.any(String)]] });
    expect({ succeededWhileLongRan, ...summary(fastJob) }).toEqual({
      succeededWhileLongRan: true,
      status: 'SUCCEEDED',
      attempts: [['SUCCEEDED', null]],
    });
  }, 120_000);
});

describe('fault 4: a cancel reaches a claimed job that waits its turn', () => {
  it('a job cancelled while it waits behind a slow job of its child ends CANCELLED, its handler never started', async () => {
    const sup = await startSlowClass({ name: 'prefetch' });
    await warmUp(sup, 'prefetch');
    const zero = { payload: { ms: 0 }, maxRetries: 0 };
    const {
      slow,
      neighbourId: targetId,
      moreIds,
    } = await claimedWithSlow(sup, 'prefetch', { payload: { ms: 4_000 }, maxRetries: 0 }, zero, { more: 20 });

    const target = (await sup.queue.store.jobGet({ id: targetId }))!;
    const said = await sup.queue.store.jobCancel({ id: targetId, actor: 'test' });

    const { job, events } = await sup.waitForJob(targetId, (d) => TERMINAL.includes(d.job.status), 30_000);
    // the rest still run
    for (const id of [slow.id, ...moreIds]) await sup.waitForJob(id, 'SUCCEEDED', 30_000);
    await sup.stop();

    const seen = {
      status: job.status,
      timeline: events.map((e) => e.event),
      // how it stood at the cancel, for the failure message
      atCancel: { said, status: target.status, heldBySlowJobsChild: target.owner_id === slow.owner_id },
    };
    expect(seen.status, JSON.stringify(seen)).toBe('CANCELLED');
    expect(seen.timeline, JSON.stringify(seen)).not.toContain('STARTED');
    expect(seen.timeline, JSON.stringify(seen)).not.toContain('SUCCEEDED');
  }, 90_000);
});

describe('slots: a child killed for one job', () => {
  it('spends a retry of the culprit only; its other running job goes back free, logged as a victim of it', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [
        {
          name: 'pair',
          handler: 'sleep',
          concurrency: 2,
          max_runtime_seconds: 1,
          kill_grace_seconds: 0.5,
          max_retries: 0,
        },
      ],
    });
    // Both ignore their signal; the culprit starts first, so it is the first past its runtime and grace.
    const { id: culprit } = await sup.queue.enqueue({ class: 'pair', payload: { ms: 60_000 }, maxRetries: 0 });
    await sup.waitForJob(culprit, 'RUNNING');
    const { id: victim } = await sup.queue.enqueue({ class: 'pair', payload: { ms: 60_000 }, maxRetries: 0 });
    await sup.waitForJob(victim, 'RUNNING');

    const killed = await sup.waitForEvent('CHILD_KILLED', { reason: 'max_runtime' }, 30_000);
    const victimLine = await sup.waitForEvent('JOB_RECOVERED', { job_id: victim }, 30_000);
    const culpritEnd = await sup.waitForJob(culprit, 'FAILED', 30_000);
    const victimFirst = (await sup.queue.get(victim))!.attempts[0]!;
    await sup.stop();

    expect(killed.job_id).toBe(culprit);
    expect(summary(culpritEnd)).toEqual({ status: 'FAILED', attempts: [['FAILED', 'TIMEOUT:MAX_RUNTIME']] });
    expect(victimLine).toMatchObject({ victim_of: culprit, outcome: 'QUEUED' });
    expect([victimFirst.status, victimFirst.error_code, victimFirst.error_detail]).toEqual([
      'CANCELLED',
      'LEASE:RELEASED',
      `victim of job ${culprit} (TIMEOUT:MAX_RUNTIME)`,
    ]);
  }, 90_000);
});
