/**
 * An hour of a queue's life, written as its workers would have written it
 * (a clock moved through the hour): jobs that succeeded and failed minute by
 * minute with what each cost, a class whose children keep crashing, a paused class. What the
 * overview's chart and alerts show, and the docs' screenshot.
 */
import { openQueue } from '../../src/queue/queue.js';
import { migrate } from '../../src/store/open.js';
import { TestClock } from '../helpers/clock.js';
import { claimJobs, completeIfHeld, failIfHeld } from '../helpers/fenced-writes.js';

const MINUTE = 60_000;
/**
 * Minutes of history, ending a few minutes before `now`: seeding them takes
 * a minute or more under load, and the page that reads "the last hour" is
 * opened after; an hour filled to its first minute lost that minute's jobs.
 */
const MINUTES = 55;
const OWNER = 'web-1:4100:a1b2c3/email.0.1';

/** Writes the hour into the database; returns how many jobs succeeded and failed in it. */
export async function seedHistory(database: string, now: number): Promise<{ succeeded: number; failed: number }> {
  const clock = new TestClock(now - (MINUTES + 1) * MINUTE);
  await migrate({ database });
  const queue = await openQueue({ database, clock, actor: 'api' });
  const { store } = queue;
  let succeeded = 0;
  let failed = 0;
  try {
    for (let minute = 0; minute < MINUTES; minute++) {
      // A daily shape: busier in the middle of the hour, with a bad patch of upstream errors.
      const jobs = 4 + Math.round(6 * Math.sin((minute / MINUTES) * Math.PI)) + (minute % 7);
      const failing = minute >= 38 && minute < 46 ? 3 + (minute % 3) : minute % 11 === 0 ? 1 : 0;
      for (let n = 0; n < jobs; n++) {
        const cls = n % 3 === 0 ? 'report' : 'email';
        const { id } = await queue.enqueue({ class: cls, payload: { minute, n }, maxRetries: 0 });
        const [job] = await claimJobs(store, { classes: [cls], ownerId: OWNER, limit: 1, leaseMs: 60_000 });
        clock.advance(400);
        // reports render PDFs: more CPU and memory than an email
        const cost =
          cls === 'report'
            ? { cpuMs: 300 + ((minute * 37 + n * 11) % 900), peakRssBytes: (180 + ((minute + n) % 60)) * 1048576 }
            : { cpuMs: 2 + ((minute + n) % 9), peakRssBytes: (70 + (n % 5)) * 1048576 };
        if (n < failing) {
          const code = minute >= 38 && minute < 46 ? 'UPSTREAM:TIMEOUT' : 'SMTP:REJECTED';
          await failIfHeld(store, {
            id,
            leaseToken: job!.leaseToken,
            error: { code, detail: `${code} (seeded)`, retryable: false },
            retryDelayMs: 0,
            cost,
          });
          failed += 1;
        } else {
          await completeIfHeld(store, { id, leaseToken: job!.leaseToken, result: JSON.stringify({ ok: true }), cost });
          succeeded += 1;
        }
      }
      clock.advance(MINUTE - jobs * 400);
    }
    // Now: jobs waiting, a live supervisor whose `thumbnail` children keep dying (one killed, one crashed), and `report` paused.
    clock.advance(now - clock.now());
    await queue.enqueueMany(
      Array.from({ length: 12 }, (_, n) => ({ class: n % 2 === 0 ? 'email' : 'thumbnail', payload: { n } })),
    );
    const supervisor = 'web-1:4100:a1b2c3';
    await store.workerRegister({
      id: supervisor,
      kind: 'supervisor',
      host: 'web-1',
      supervisorId: null,
      pid: 4100,
      class: null,
      state: 'ready',
      restarts: 0,
    });
    for (const [n, cls] of ['email', 'thumbnail', 'thumbnail', 'thumbnail'].entries()) {
      const id = `${supervisor}/${cls}.0.${n + 1}`;
      await store.workerRegister({
        id,
        kind: 'child',
        host: 'web-1',
        supervisorId: supervisor,
        pid: 4101 + n,
        class: cls,
        state: 'ready',
        restarts: n,
      });
      if (cls === 'thumbnail' && n < 3)
        await store.workerExit({
          id,
          state: 'exited',
          exitCode: n === 1 ? null : 1,
          exitSignal: n === 1 ? 'SIGKILL' : null,
        });
    }
    await store.classPause({ class: 'report', actor: 'cli' });
  } finally {
    await queue.close();
  }
  return { succeeded, failed };
}
