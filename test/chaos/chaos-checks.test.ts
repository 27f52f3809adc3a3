import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Zombie } from '../../scripts/chaos/damage.js';
import { readEffects } from '../../scripts/chaos/effects-reader.js';
import { EffectsRecorder, effectsFileName, type Effect } from '../../scripts/chaos/effects.js';
import { ProcessLedger } from '../../scripts/chaos/process-ledger.js';
import { judgeChildren } from '../../scripts/chaos/supervisor-log.js';
import { Workload } from '../../scripts/chaos/workload.js';
import { gatherZombieEvidence } from '../../scripts/chaos/zombie-evidence.js';
import { SeededRandom } from '../../scripts/random.js';
import type { Queue } from '../../src/queue/queue.js';
import { readStat } from '../../scripts/proc.js';
import type { EventRow, JobRow, ProducerStore } from '../../src/store/types.js';
import { trackProcess, useProcessGuard } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-chaos-checks-');

/** A store that answers eventList only: what the zombie evidence reads. */
function storeWithEvents(events: Pick<EventRow, 'job_id' | 'event' | 'detail'>[]): ProducerStore {
  const eventList = async ({ jobId }: { jobId: number }) =>
    events.filter((e) => e.job_id === jobId).map((e, i) => ({ id: i, ts: 0, actor: 'worker', ...e }) as EventRow);
  return { eventList } as unknown as ProducerStore;
}

const write = (
  job_id: number,
  lease_token: string,
  ts: number,
  outcome: Effect['outcome'],
  sent_at = ts - 5,
): Effect => ({
  sent_at,
  job_id,
  attempt: 1,
  lease_token,
  pid: 100 + job_id,
  proc_start: 1,
  kind: 'write',
  outcome,
  ts,
});

describe("the chaos program's zombie evidence", () => {
  it("counts what the handlers saw after resuming and the events under the zombies' tokens, and flags a write the store took after the resume", async () => {
    const zombies: Zombie[] = [
      { jobId: 1, attempt: 1, leaseToken: 'a', pid: 101, resumedAt: 1_000 },
      { jobId: 2, attempt: 1, leaseToken: 'b', pid: 102, resumedAt: 1_000 },
      { jobId: 3, attempt: 1, leaseToken: 'c', pid: 103, resumedAt: 1_000 },
      { jobId: 4, attempt: 1, leaseToken: 'd', pid: 104, resumedAt: 1_000 },
    ];
    const effects = [
      write(1, 'a', 500, 'accepted'), // before the stop: the lease was still held
      write(1, 'a', 1_010, 'refused'),
      write(2, 'b', 1_020, 'accepted'), // a stale token's write taken: the fence failed
      write(3, 'x', 1_030, 'refused'), // another attempt's token
      write(4, 'd', 1_040, 'accepted', 900), // sent before the stop, answered after the resume: taken while held
    ];
    const store = storeWithEvents([
      { job_id: 1, event: 'ZOMBIE_WRITE_REJECTED', detail: JSON.stringify({ op: 'progress', lease_token: 'a' }) },
      { job_id: 1, event: 'ZOMBIE_WRITE_REJECTED', detail: JSON.stringify({ op: 'heartbeat', lease_token: 'a' }) },
      { job_id: 3, event: 'ZOMBIE_WRITE_REJECTED', detail: JSON.stringify({ op: 'complete', lease_token: 'x' }) },
      { job_id: 2, event: 'SUCCEEDED', detail: null },
    ]);
    const { evidence, violations } = await gatherZombieEvidence(store, zombies, effects);
    expect(evidence).toEqual({
      resumed: 4,
      wrote: 3,
      refused_by_store: 1,
      refused_by_child: 0,
      failed: 0,
      accepted: 1,
      sent_while_held: 1,
      with_rejected_event: 1,
      rejected_events_by_op: { progress: 1, heartbeat: 1 },
    });
    expect(violations).toHaveLength(1);
    expect(violations[0]).toMatch(/^job 2: pid 102/);
  });
});

describe("the chaos program's drain", () => {
  it('counts a job that went back to QUEUED while it counted (a retry): one read, not one per status', async () => {
    // The job is RUNNING for the first read and QUEUED (a retry) for every later one.
    let reads = 0;
    const jobList = async ({ status }: { status?: string }) => {
      const job = { id: 1, status: reads++ === 0 ? 'RUNNING' : 'QUEUED' } as JobRow;
      return status === undefined || status === job.status ? [job] : [];
    };
    const queue = { enqueueMany: async () => [{ id: 1 }] } as unknown as Queue;
    const workload = new Workload(queue, new SeededRandom(1), newDir());
    await workload.enqueueLong(1);
    expect(await workload.unfinished({ jobList } as unknown as ProducerStore)).toBe(1);
  });
});

describe("the chaos program's judgement of the supervisors' log", () => {
  it('counts error exits as crashes, and kills of children that were neither stopped nor given trouble, and stalls, as kills of healthy ones', () => {
    const file = path.join(newDir(), 'supervisor.log');
    const line = (ts: string, fields: Record<string, unknown>) =>
      JSON.stringify({ ts, level: 'warn', msg: 'm', ...fields });
    writeFileSync(
      file,
      [
        line('2020-01-01T00:00:00.000Z', { event: 'CHILD_EXITED', pid: 1, exit_code: 1 }), // an earlier run's
        line('2030-01-01T00:00:00.000Z', { event: 'CHILD_EXITED', pid: 2, exit_code: 1, exit_signal: null }),
        line('2030-01-01T00:00:01.000Z', { event: 'CHILD_EXITED', pid: 3, exit_code: null, exit_signal: 'SIGKILL' }),
        line('2030-01-01T00:00:02.000Z', { event: 'CHILD_EXITED', pid: 4, exit_code: 0 }),
        line('2030-01-01T00:00:03.000Z', { event: 'CHILD_KILLED', pid: 5, reason: 'stale_heartbeat' }), // stopped by chaos
        line('2030-01-01T00:00:04.000Z', { event: 'CHILD_KILLED', pid: 6, reason: 'max_runtime' }), // ran a hanging job
        line('2030-01-01T00:00:05.000Z', { event: 'CHILD_KILLED', pid: 7, reason: 'shutdown' }),
        line('2030-01-01T00:00:06.000Z', { event: 'CHILD_KILLED', pid: 8, reason: 'stale_heartbeat' }), // healthy
        line('2030-01-01T00:00:07.000Z', { event: 'DB_UNAVAILABLE' }),
        line('2030-01-01T00:00:07.500Z', { event: 'CHILD_STALLED', pid: 9 }), // a stalled loop, found
        line('2030-01-01T00:00:07.600Z', { event: 'CHILD_STALLED', pid: 5 }), // stopped by chaos
        '{"ts":"2030-01-01T00:00:08.000Z","event":"CHILD_EXI', // cut short by a SIGKILL
      ].join('\n'),
    );
    const verdicts = judgeChildren(file, Date.parse('2029-01-01'), {
      stoppedPids: new Set([5]),
      troublePids: new Set([6]),
    });
    expect(verdicts.crashes.map((c) => c.split(' ')[2])).toEqual(['2:']);
    expect(verdicts.healthy_kills.map((c) => c.split(' ')[2])).toEqual(['8:', '9:']);
    expect({ unavailable: verdicts.db_unavailable, recovered: verdicts.db_recovered }).toEqual({
      unavailable: 1,
      recovered: 0,
    });
  });
});

describe("the chaos handlers' effects files", () => {
  const EFFECTS = fileURLToPath(new URL('../../dist/scripts/chaos/effects.js', import.meta.url));

  it(
    'keep taking records while another recording process is stopped, and lose at most the last record of a process SIGKILLed mid-record',
    { timeout: 60_000 },
    async () => {
      const dir = newDir();
      const ledger = new ProcessLedger();
      const script = `const { EffectsRecorder } = await import(${JSON.stringify(EFFECTS)});
      const recorder = new EffectsRecorder(${JSON.stringify(dir)});
      console.log('recording');
      for (let i = 0; ; i++) recorder.record({ job_id: i, attempt: 1, lease_token: 't', pid: process.pid, kind: 'start' });`;
      const other = spawn(process.execPath, ['--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      trackProcess(other.pid!, 'the other effects recorder');
      const otherStart = readStat(other.pid!)!.startTicks;
      const otherFile = path.join(dir, effectsFileName(other.pid!, otherStart));
      const recorder = new EffectsRecorder(dir);
      try {
        await once(other.stdout, 'data');
        for (let stop = 1; stop <= 20; stop++) {
          // Stopped only while it is recording (its file has grown since the last stop), at random points of a record.
          const size = statSync(otherFile).size;
          await waitFor('the other process to record', () => statSync(otherFile).size > size, { intervalMs: 1 });
          other.kill('SIGSTOP');
          recorder.record({ job_id: -stop, attempt: 1, lease_token: 'mine', pid: process.pid, kind: 'done' });
          other.kill('SIGCONT');
        }
      } finally {
        other.kill('SIGKILL');
        await once(other, 'exit');
      }
      ledger.noteDeath({ pid: other.pid!, startTicks: otherStart, at: Date.now(), how: 'was SIGKILLed by the test' });

      const reading = readEffects(dir, ledger);
      expect(reading.torn).toEqual([]);
      expect(reading.cutByDeath.length).toBeLessThanOrEqual(1);
      expect(reading.files).toBe(2);
      const effects = reading.effects;
      expect(effects.filter((e) => e.lease_token === 'mine').map((e) => e.job_id)).toEqual(
        Array.from({ length: 20 }, (_, i) => -(i + 1)),
      );
      expect(effects.length).toBeGreaterThanOrEqual(40); // each of ours, and at least one of its before each stop
      expect(effects.every((e, i) => i === 0 || effects[i - 1]!.ts <= e.ts)).toBe(true);
      // A record cut short in the file of a process that did not die is a record lost: it fails the reading.
      appendFileSync(
        path.join(dir, effectsFileName(process.pid, readStat(process.pid)!.startTicks)),
        '{"job_id":1,"kin',
      );
      expect(readEffects(dir, ledger).torn).toEqual([expect.stringMatching(/no death of pid \d+/)]);
    },
  );
});
