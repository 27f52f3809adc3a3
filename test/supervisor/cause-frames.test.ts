/**
 * A stored stack's `Caused by:` sections keep the handler's frames and leave
 * out leasehold's own (the child's run loop, job run, …), which each cause
 * would otherwise repeat, saying how many were left out. The first section
 * keeps them: how the handler was called is read there once.
 */
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-cause-frames-');

describe("a cause's frames", () => {
  it("keep the handler's and say how many of leasehold's were left out", async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'pay', handler: 'explained' }] });
    const { id } = await sup.queue.enqueue({ class: 'pay', payload: { mode: 'nested' } });
    await sup.waitForJob(id, 'FAILED');
    const stack = (await sup.queue.get(id))!.attempts[0]!.error_stack!;

    const [first, cause, ...more] = stack.split('\nCaused by: ');
    expect(more, stack).toEqual([]);
    expect(first, stack).toMatch(/\n\s+at chargeCardNested \(.*explained\.mjs:\d+:\d+\)/);
    expect(first, 'the first section keeps how the handler was called').toMatch(/job-run\.js/);
    const lines = cause!.split('\n');
    expect(lines[0]).toBe('Error: HTTP 402 from the bank');
    expect(lines[1], stack).toMatch(/^\s+at chargeCardNested \(.*explained\.mjs:\d+:\d+\)$/);
    expect(cause, stack).not.toMatch(/(run-loop|job-run)\.js/);
    // Node's own frame is there when the run loop resumed from a message (the writer's answer), not a timer.
    expect(lines.at(-1), stack).toMatch(
      /^ {4}\.\.\. \d+ leasehold frames?( and \d+ of node's)?( and \d+ of OpenTelemetry's)?$/,
    );
    expect(await sup.stop()).toBe(0);
  });
});
