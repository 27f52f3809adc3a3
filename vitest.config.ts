import { defineConfig } from 'vitest/config';

/** Every test file: `npm run test:all`, what CI runs. `vitest.fast.config.ts` narrows it to the loop between edits. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The machines have 2 cores and many suites start real processes: one file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/reporters/slowest-files.ts'],
  },
});
