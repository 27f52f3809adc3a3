import { describe, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { expectChaosHolds } from './run-chaos.js';

const newDir = tempDir('leasehold-chaos-test-');

describe('chaos: the guarantees hold under SIGKILL, SIGSTOP and supervisor death', () => {
  it('60 seconds of damage, zero violations', { timeout: 360_000 }, async () => {
    await expectChaosHolds(['--dir', newDir()]);
  });
});
