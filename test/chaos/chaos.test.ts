import { describe, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { expectChaosHolds, HALF_MINUTE_RUN, NO_MINIMUM_DAMAGE, type ChaosMinimums } from './run-chaos.js';

const newDir = tempDir('leasehold-chaos-test-');

describe('chaos: the guarantees hold under SIGKILL, SIGSTOP and supervisor death', () => {
  it('30 seconds of damage, zero violations, every job SUCCEEDED', { timeout: 360_000 }, async () => {
    await expectChaosHolds(
      ['--dir', newDir(), '--seconds', '30', '--jobs', '120', '--seed', '7'],
      HALF_MINUTE_RUN,
      330_000,
    );
  });

  it('30 seconds of damage with 8 jobs at once in each child, zero violations', { timeout: 360_000 }, async () => {
    // Eight slots drain the queue eight times as fast: four times the jobs keep the children busy enough to be hit.
    await expectChaosHolds(
      [
        '--dir',
        newDir(),
        '--seconds',
        '30',
        '--jobs',
        '480',
        '--short-jobs',
        '240',
        '--seed',
        '7',
        '--concurrency',
        '8',
      ],
      HALF_MINUTE_RUN,
      330_000,
    );
  });

  it(
    '20 seconds of damage while another process holds the write lock past the busy timeout (--db-faults): zero violations, the supervisor never exits',
    { timeout: 300_000 },
    async () => {
      // The lock-outs are the point: while one holds, the children can neither claim nor start, so little else is required.
      const minimums: ChaosMinimums = { ...NO_MINIMUM_DAMAGE, jobs: 60, faults: { lockouts: 2 } };
      await expectChaosHolds(
        ['--dir', newDir(), '--seconds', '20', '--jobs', '80', '--seed', '11', '--db-faults'],
        minimums,
        270_000,
      );
    },
  );
});
