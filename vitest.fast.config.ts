import { defineConfig } from 'vitest/config';
import all from './vitest.config.js';

/**
 * The loop between edits, `npm test`: the unit tests, both drivers'
 * conformance suites, the files that take a second or two, and four that
 * run the real processes together (a supervisor and its children, the CLI
 * against them). Chosen by each file's duration
 * in a full run (the slowest-files report of `npm run test:all`), to keep
 * the whole loop under 3 minutes on 2 cores, build and typecheck included.
 */
export default defineConfig({
  ...all,
  test: {
    ...all.test,
    include: [
      'test/unit/**/*.test.ts',
      // the drivers
      'test/store/sqlite-conformance.test.ts',
      'test/store/outcome-table.test.ts',
      'test/store/postgres-conformance.test.ts',
      // a second or two each
      'test/layers.test.ts',
      'test/config.test.ts',
      'test/backoff.test.ts',
      'test/log.test.ts',
      'test/schedules.test.ts',
      'test/store/{faults,migrations,no-replace,query-plans,postgres-query-plans,stats,idle-claim}.test.ts',
      'test/child/{lease-renewal,group-commit}.test.ts',
      'test/chaos/{chaos-checks,process-ledger}.test.ts',
      'test/dashboard/{actions,cli,data,pages,postgres}.test.ts',
      'test/cli/{loads,version,logs,list-columns}.test.ts',
      // the parts together: a supervisor run worked through every command, how a handler's failures and crashes
      // end and are explained, who is charged when a child dies, what children measure, pause and rate limits
      'test/cli/commands.test.ts',
      'test/cli/stale-supervisor.test.ts',
      'test/supervisor/failures.test.ts',
      'test/supervisor/failure-explained.test.ts',
      'test/supervisor/blame.test.ts',
      'test/supervisor/cost.test.ts',
      'test/cli/pause.test.ts',
    ],
  },
});
