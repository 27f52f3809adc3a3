import { defineConfig } from 'vitest/config';

/** The bench's own tests (`npm test -w bench`): not in the product's suite, for they need the bench's peers. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
