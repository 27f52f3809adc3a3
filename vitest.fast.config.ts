import { defineConfig } from 'vitest/config';
import all from './vitest.config.js';

/**
 * The loop between edits, `npm test`: the unit tests, both drivers'
 * conformance suites, and a few quick files that run the real processes
 * together. Chosen by each file's duration in a full run (the slowest-files
 * report of `npm run test:all`); the whole loop stays under 3 minutes on 2
 * cores, build and typecheck included.
 */
export default defineConfig({
  ...all,
  test: {
    ...all.test,
    include: [
      'test/unit/**/*.test.ts',
      'test/store/sqlite-conformance.test.ts',
      'test/store/postgres-conformance.test.ts',
      'test/layers.test.ts',
      'test/config.test.ts',
    ],
  },
});
