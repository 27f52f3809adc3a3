import { defineConfig } from 'vitest/config';

/**
 * The folder decides a test's tier, and each tier is a vitest project:
 *
 * - unit: rules, on fakes and fake timers; no process, no server;
 * - store: both drivers' conformance and the store's own tests, on real SQLite files and the real PostgreSQL;
 * - smoke: the process tests `npm test` runs too: a supervisor run worked through every command, and how a
 *   handler's failures and crashes end;
 * - process: every other test that starts real supervisors, children and CLI runs, database faults and the
 *   store under load from several processes included;
 * - browser: the dashboard in a real Chromium;
 * - chaos: the chaos runs, one at a time: each loads both cores for a minute;
 * - exclusive: what stops the shared PostgreSQL server, alone, after every other tier.
 *
 * Every file owns its temp folder, PostgreSQL schema and ports, so files run side by side. `npm test` is unit,
 * store and smoke. `npm run test:all` (CI) runs the first five tiers, then the chaos tier alone, then the
 * exclusive tier. The chaos runs once ran beside the five, niced: as the five grew, the load changed what a
 * chaos run measures (a zombie is a child stopped until its lease is taken back, which races the supervisor's
 * kill of a silent child; loaded runs made 0 of 9) and starved the five's own deadlines.
 */
const FILES_AT_ONCE = 4; // process tests spend most of their time waiting on their children

/** The folders under test/ of each tier. */
export const TIERS = {
  unit: ['unit'],
  store: ['store'],
  smoke: ['smoke'],
  process: ['cli', 'supervisor', 'child', 'dashboard', 'faults', 'load'],
  browser: ['browser'],
  chaos: ['chaos'],
  exclusive: ['exclusive'],
} as const;

/** How each tier's files run: at once, or one at a time (in a plain `vitest run`, chaos, then exclusive, last). */
function scheduling(tier: keyof typeof TIERS) {
  if (tier === 'chaos') return { fileParallelism: false, maxWorkers: 1, sequence: { groupOrder: 1 } };
  if (tier === 'exclusive') return { fileParallelism: false, maxWorkers: 1, sequence: { groupOrder: 2 } };
  return { maxWorkers: FILES_AT_ONCE, sequence: { groupOrder: 0 } };
}

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/reporters/slowest-files.ts'],
    projects: Object.entries(TIERS).map(([name, folders]) => ({
      extends: true as const,
      test: {
        name,
        include: folders.map((folder) => `test/${folder}/**/*.test.ts`),
        ...scheduling(name as keyof typeof TIERS),
      },
    })),
  },
});
