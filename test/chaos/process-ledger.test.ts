import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { killSurvivors, ProcessLedger } from '../../scripts/chaos/process-ledger.js';
import { readStat } from '../../scripts/proc.js';
import { isAlive, waitForExit } from '../helpers/processes.js';

/** Every process a test started, killed after it (groups included) whatever happened. */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
});

/** A shell in a group of its own (as the supervisor starts a child) that starts `grandchild` in the background and prints its pid. */
async function parentWithGrandchild(grandchild: string): Promise<{ parent: ChildProcess; grandchildPid: number }> {
  const parent = spawn('sh', ['-c', `${grandchild} & echo $!; wait`], {
    detached: true,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  started.push(parent.pid!);
  const [line] = (await once(parent.stdout!, 'data')) as [Buffer];
  const grandchildPid = Number(line.toString().trim());
  started.push(grandchildPid);
  return { parent, grandchildPid };
}

async function killAndReap(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe("the chaos program's orphan check (/proc)", () => {
  it('finds what a dead process left in its process group, waits for it, and lists it when it stays', async () => {
    const { parent, grandchildPid } = await parentWithGrandchild('sleep 300');
    const ledger = new ProcessLedger();
    ledger.notePid(parent.pid!, 'a child');
    await killAndReap(parent);

    const survivors = await ledger.waitUntilGone(300);
    expect(survivors.map((s) => s.pid)).toEqual([grandchildPid]);
    expect(survivors[0]?.origin).toContain(`a child ${parent.pid}`);
    expect(survivors[0]?.command).toBe('sleep 300');

    killSurvivors(survivors);
    expect(await waitForExit(grandchildPid, 5_000)).toBe(true);
    expect(await ledger.waitUntilGone(5_000)).toEqual([]);
  });

  it('keeps what it saw descend from a process, even once it left the group and lost its parent', async () => {
    const { parent, grandchildPid } = await parentWithGrandchild('setsid sleep 300');
    const ledger = new ProcessLedger();
    ledger.noteDescendants(parent.pid!, 'seen under the supervisor');
    await killAndReap(parent);

    expect(isAlive(grandchildPid)).toBe(true);
    expect(ledger.survivors().map((s) => s.pid)).toEqual([grandchildPid]);
  });

  it('does not take a later process with a noted pid for the noted one', async () => {
    const { parent, grandchildPid } = await parentWithGrandchild('sleep 300');
    const stat = readStat(parent.pid!)!;
    const ledger = new ProcessLedger();
    ledger.note(parent.pid!, stat.startTicks - 1, 'an earlier process with this pid');
    // The pid names another process now: neither it nor the members of its group are the earlier one's.
    expect(ledger.survivors()).toEqual([]);
    ledger.note(parent.pid!, stat.startTicks, 'the process itself');
    expect(new Set(ledger.survivors().map((s) => s.pid))).toEqual(new Set([parent.pid, grandchildPid]));
  });
});
