import { defineConfig } from 'vitest/config';

// The machines have 2 cores and many suites start real processes: one file at a time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
