import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { openQueue } from '../../src/queue/queue.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const RACER = fileURLToPath(new URL('../fixtures/claim-racer.mjs', import.meta.url));
const JOBS = 2_000; // each racer claims hundreds while the others race it; more jobs only made the tier slower
const RACERS = 4;
const newDir = tempDir();
const schemas = schemaPool('lh_race');

interface RacerReport {
  ownerId: string;
  committed: number[];
  lost: { id: number; code: string }[];
}

/** One fresh database per race: a SQLite file, or a PostgreSQL schema (the racers open it by URL). */
const DRIVERS: [string, () => string][] = [
  ['one SQLite file', () => dbPathIn(newDir())],
  ['one PostgreSQL schema', () => pgUrl(schemas.next())],
];

describe.each(DRIVERS)('claim race between OS processes on %s', (_name, freshDatabase) => {
  it.each([1, 10])(
    `${RACERS} processes, ${JOBS} jobs, batch %i: every job claimed and committed exactly once`,
    async (batch) => {
      const database = freshDatabase();
      await migrate({ database });
      const queue = await openQueue({ database });
      await queue.enqueueMany(Array.from({ length: JOBS }, (_, n) => ({ class: 'race', payload: { n } })));

      const started = Date.now();
      const reports = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          execa('node', [RACER, database, `racer-${i}`, String(batch)]).then(
            (r) => JSON.parse(r.stdout) as RacerReport,
          ),
        ),
      );
      console.log(
        `claim race on ${queue.store.driver} (batch ${batch}): ${JOBS} jobs in ${Date.now() - started} ms across ${RACERS} processes`,
      );

      const committed = reports.flatMap((r) => r.committed);
      expect(reports.flatMap((r) => r.lost)).toEqual([]);
      expect(committed).toHaveLength(JOBS);
      expect(new Set(committed).size).toBe(JOBS);
      // more than one racer got work: the race was real
      expect(reports.filter((r) => r.committed.length > 0).length).toBeGreaterThan(1);

      const rows = await queue.list({ limit: JOBS + 1 });
      expect(rows).toHaveLength(JOBS);
      expect(rows.every((row) => row.status === 'SUCCEEDED' && row.attempts === 1)).toBe(true);
      for (const report of reports) {
        for (const id of report.committed.slice(0, 50)) {
          const job = rows.find((row) => row.id === id)!;
          expect(job.owner_id).toBe(report.ownerId);
          expect(JSON.parse(job.result!)).toBe(report.ownerId);
        }
      }
      await queue.close();
    },
    180_000,
  );
});
