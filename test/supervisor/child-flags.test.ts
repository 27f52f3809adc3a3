/**
 * The Node flags a supervisor starts its children with, read back from a
 * real child: a capped young generation unless the operator chose one.
 */
import { describe, expect, it } from 'vitest';
import { CHILD_SEMI_SPACE_FLAG } from '../../supervisor/child-flags.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-child-flags-');

interface Flags {
  execArgv: string[];
  nodeOptions: string | null;
}

async function childFlags(env?: Record<string, string>): Promise<Flags> {
  const sup = await startSupervisor({ dir: newDir(), env, classes: [{ name: 'flags', handler: 'node-flags' }] });
  try {
    const { id } = await sup.queue.enqueue({ class: 'flags', payload: {} });
    const { job } = await sup.waitForJob(id, 'SUCCEEDED');
    return job.result as Flags;
  } finally {
    await sup.stop();
  }
}

describe("the children's Node flags", () => {
  it('caps the young generation by default', async () => {
    const { execArgv } = await childFlags();
    expect(execArgv).toContain(CHILD_SEMI_SPACE_FLAG);
  });

  it("leaves the operator's own young generation size alone (NODE_OPTIONS)", async () => {
    const { execArgv, nodeOptions } = await childFlags({ NODE_OPTIONS: '--max-semi-space-size=32' });
    expect(execArgv).not.toContain(CHILD_SEMI_SPACE_FLAG);
    expect(nodeOptions).toBe('--max-semi-space-size=32');
  });
});
