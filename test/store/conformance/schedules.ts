import { describe, expect, it } from 'vitest';
import type { ScheduleAdvance } from '../../../src/store/schedules.js';
import type { NewJob } from '../../../src/store/types.js';
import { completeIfHeld } from '../../helpers/fenced-writes.js';
import type { Conformance } from './context.js';

const MINUTE = 60_000;

/** The job of one occurrence of schedule `tick` (class email) at `at`. */
const occurrence = (at: number): NewJob => ({
  class: 'email',
  payload: '{}',
  priority: 0,
  runAt: at,
  maxRetries: 0,
  maxRetriesFromClass: false,
  idempotencyKey: `schedule:tick@${new Date(at).toISOString()}`,
});

/** The schedules table: a compare-and-set cursor per schedule, moved together with the jobs it enqueues. */
export function scheduleSuites(c: Conformance): void {
  const advance = (params: Partial<ScheduleAdvance> & Pick<ScheduleAdvance, 'expected' | 'through'>) =>
    c.store.scheduleAdvance({ class: 'email', name: 'tick', jobs: [], actor: 'sup-a', ...params });

  describe('schedules', () => {
    it('starts a schedule once: a second start from nothing is refused', async () => {
      const start = c.clock.now();
      expect(await advance({ expected: null, through: start })).toEqual({ advanced: true, jobs: [] });
      expect(await advance({ expected: null, through: start + 5, actor: 'sup-b' })).toEqual({ advanced: false });
      expect(await c.store.scheduleList()).toEqual([
        {
          class: 'email',
          name: 'tick',
          checked_through: start,
          last_run_at: null,
          last_job_id: null,
          updated_at: start,
          updated_by: 'sup-a',
        },
      ]);
    });

    it('enqueues the occurrences only with the cursor it read, and records the last run', async () => {
      const start = c.clock.now();
      await advance({ expected: null, through: start });
      c.clock.advance(2 * MINUTE);
      const due = [start + MINUTE, start + 2 * MINUTE];
      const won = await advance({ expected: start, through: due[1]!, jobs: due.map(occurrence) });
      expect(won.advanced).toBe(true);
      const ids = won.advanced ? won.jobs.map((job) => job.id) : [];
      expect(won.advanced && won.jobs.every((job) => job.created)).toBe(true);
      // a second process that read the same cursor loses, and writes nothing
      expect(await advance({ expected: start, through: due[1]!, jobs: due.map(occurrence), actor: 'sup-b' })).toEqual({
        advanced: false,
      });
      const jobs = await c.store.jobList({ class: 'email', limit: 10 });
      expect(jobs.map((job) => [job.id, job.run_at, job.idempotency_key]).reverse()).toEqual(
        due.map((at, i) => [ids[i], at, occurrence(at).idempotencyKey]),
      );
      expect(await c.eventsOf(ids[0]!)).toEqual(['ENQUEUED']);
      expect(await c.store.scheduleList()).toMatchObject([
        { checked_through: due[1], last_run_at: due[1], last_job_id: ids[1], updated_by: 'sup-a' },
      ]);
    });

    it('skips without enqueueing, keeping the last run', async () => {
      const start = c.clock.now();
      await advance({ expected: null, through: start });
      await advance({ expected: start, through: start + MINUTE, jobs: [occurrence(start + MINUTE)] });
      expect(await advance({ expected: start + MINUTE, through: start + 9 * MINUTE })).toEqual({
        advanced: true,
        jobs: [],
      });
      expect(await c.store.scheduleList()).toMatchObject([
        { checked_through: start + 9 * MINUTE, last_run_at: start + MINUTE },
      ]);
    });

    it('refuses an occurrence whose job already finished and was pruned: the cursor, not the key, keeps it once', async () => {
      const start = c.clock.now();
      await advance({ expected: null, through: start });
      c.clock.advance(MINUTE);
      const first = await advance({ expected: start, through: start + MINUTE, jobs: [occurrence(start + MINUTE)] });
      const id = first.advanced ? first.jobs[0]!.id : 0;
      const job = await c.claimOne();
      expect(job.id).toBe(id);
      await completeIfHeld(c.store, { id, leaseToken: job.leaseToken, result: null });
      expect(await c.store.jobsPruneBatch({ status: 'SUCCEEDED', finishedBefore: c.clock.now() + 1, limit: 10 })).toBe(
        1,
      );
      // a late host that read the cursor before the first enqueue
      expect(
        await advance({
          expected: start,
          through: start + MINUTE,
          jobs: [occurrence(start + MINUTE)],
          actor: 'sup-late',
        }),
      ).toEqual({ advanced: false });
      expect(await c.store.jobList({ limit: 10 })).toEqual([]);
    });

    it("reports a job that already held an occurrence's key as not created", async () => {
      const start = c.clock.now();
      const held = await c.queue.enqueue({ class: 'email', key: occurrence(start + MINUTE).idempotencyKey! });
      await advance({ expected: null, through: start });
      expect(await advance({ expected: start, through: start + MINUTE, jobs: [occurrence(start + MINUTE)] })).toEqual({
        advanced: true,
        jobs: [{ id: held.id, created: false }],
      });
    });

    it('lets one of two advances from the same cursor win when they run at once', async () => {
      const start = c.clock.now();
      await advance({ expected: null, through: start });
      const race = await Promise.all(
        ['sup-a', 'sup-b', 'sup-c'].map((actor) =>
          advance({ expected: start, through: start + MINUTE, jobs: [occurrence(start + MINUTE)], actor }),
        ),
      );
      expect(race.filter((result) => result.advanced)).toHaveLength(1);
      expect(await c.store.jobList({ limit: 10 })).toHaveLength(1);
    });
  });
}
