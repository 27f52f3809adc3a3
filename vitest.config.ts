import { defineConfig } from 'vitest/config';

/**
 * The folder decides a test's tier, and each tier is a vitest project:
 *
 * - unit: rules, on fakes and fake timers; no process, no server;
 * - store: both drivers' conformance and the store's own tests, on real SQLite files and the real PostgreSQL;
 * - smoke: the process tests `npm test` runs too: a supervisor run worked through every command, how failures
 *   end and are explained, who is charged when a child dies, pause;
 * - process: every other test that starts real supervisors, children and CLI runs;
 * - browser: the dashboard in a real Chromium;
 * - serial: chaos and the database faults, which stop the PostgreSQL server and load both cores: they run after
 *   every other tier, one file at a time.
 *
 * Every file owns its temp folder, PostgreSQL schema and ports, so the files of the other tiers run side by side.
 * `npm test` is unit, store and smoke; `npm run test:all` (CI) is all of them.
 */
const PARALLEL = 4; // files at once: process tests spend most of their time waiting on children
/** The folders under test/ of each tier. */
export const TIERS = {
  unit: ['unit'],
  store: ['store'],
  smoke: ['smoke'],
  process: ['cli', 'supervisor', 'child', 'dashboard'],
  browser: ['browser'],
  serial: ['chaos', 'faults', 'bench'],
} as const;

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
        ...(name === 'serial'
          ? { fileParallelism: false, maxWorkers: 1, sequence: { groupOrder: 1 } }
          : { maxWorkers: PARALLEL, sequence: { groupOrder: 0 } }),
      },
    })),
  },
});
