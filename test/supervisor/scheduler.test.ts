/**
 * The scheduler in this process, on a real SQLite file, with real timers:
 * another process holds the write lock until a schedule's write has failed
 * after every busy retry (about 4 s, under ON_TIME_MS); the
 * scheduler does not stop, logs no failure of its own for the fault, and once
 * the lock is gone enqueues what came due meanwhile (still on time), so the
 * seconds stay contiguous. stop() is safe twice and before start.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { closeLogger, createLogger } from '../../src/log.js';
import { DbAvailability, outageLog, watchAvailability } from '../../src/store/faults.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { systemClock } from '../../src/clock.js';
import { Scheduler } from '../../supervisor/scheduler.js';
import { holdExclusiveLock } from '../helpers/faults.js';
import { readJsonLog } from '../helpers/json-log.js';
import { useProcessGuard } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-scheduler-');

describe('Scheduler', () => {
  it(
    'rides out a SQLite lock-out: no crash, no failure of its own logged for the fault, no second missing',
    { timeout: 60_000 },
    async () => {
      const dir = newDir();
      const database = path.join(dir, 'queue.db');
      const logFile = path.join(dir, 'scheduler.log');
      const config = parseConfig(
        `database: ./queue.db\nclasses:\n  - name: tick\n    handler: ./h.js\n    schedules: [{ name: every-second, cron: "* * * * * *" }]\n`,
        path.join(dir, 'queue.yaml'),
      );
      const sqlite = await SqliteStore.open({ path: database, clock: systemClock });
      const logger = createLogger({
        level: 'debug',
        file: logFile,
        maxSizeMb: 10,
        maxFiles: 1,
        supervisorId: 'sup-test',
        console: false,
      });
      // As the supervisor does: faults are logged once per outage, by the store's watcher, not by the scheduler.
      const store = watchAvailability(
        sqlite,
        new DbAvailability({
          ...outageLog((level, msg, fields) => logger.log(level, msg, fields)),
          failed: () => undefined,
        }),
      );
      const options = { store, logger, classes: config.classes, payloadLimitBytes: 1024, actor: 'sup-test' };
      await new Scheduler(options).stop(); // before start: a no-op
      const scheduler = new Scheduler(options);
      const log = () => readJsonLog<{ event?: string; level: string }>(logFile);
      try {
        scheduler.start();
        scheduler.start();
        const enqueued = async () =>
          (await sqlite.jobList({ limit: 1000 })).map((job) => job.run_at).sort((a, b) => a - b);
        await waitFor('a first occurrence', async () => (await enqueued()).length >= 1, { timeoutMs: 10_000 });

        const lock = await holdExclusiveLock(database);
        await waitFor(
          'the scheduler to meet the lock-out',
          () => log().some((record) => record.event === 'DB_UNAVAILABLE'),
          { timeoutMs: 20_000 },
        );
        const releasedAt = Date.now();
        await lock.release();
        await waitFor(
          'occurrences after the lock-out',
          async () => (await enqueued()).filter((at) => at > releasedAt + 1_000).length >= 2,
          { timeoutMs: 15_000 },
        );
        await scheduler.stop();
        await scheduler.stop();

        const times = await enqueued();
        expect(times.slice(1).map((at, i) => at - times[i]!)).toEqual(times.slice(1).map(() => 1_000));
        expect(times.filter((at) => at > lock.lockedAt && at < releasedAt).length).toBeGreaterThanOrEqual(3);
        await closeLogger(logger);
        expect(log().filter((record) => record.event === 'SCHEDULE_FAILED' || record.level === 'error')).toEqual([]);
        expect(log().filter((record) => record.event === 'DB_RECOVERED')).toHaveLength(1);
        expect(log().filter((record) => record.event === 'SCHEDULE_ENQUEUED')).toHaveLength(times.length);
      } finally {
        await scheduler.stop();
        await sqlite.close();
      }
    },
  );
});
