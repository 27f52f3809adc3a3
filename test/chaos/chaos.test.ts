import { describe, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { expectChaosHolds } from './run-chaos.js';

const newDir = tempDir('leasehold-chaos-test-');

describe('chaos: the guarantees hold under SIGKILL, SIGSTOP and supervisor death', () => {
  it('60 seconds of damage, zero violations', { timeout: 360_000 }, async () => {
    await expectChaosHolds(['--dir', newDir()]);
  });

  it('60 seconds of damage with 8 jobs at once in each child, zero violations', { timeout: 360_000 }, async () => {
    // Eight slots drain the queue eight times as fast: four times the jobs keep the children busy enough to be hit.
    await expectChaosHolds(['--dir', newDir(), '--concurrency', '8', '--jobs', '960']);
  });
});
