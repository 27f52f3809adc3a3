/**
 * `supervise --watch`: editing a class's handler (or a module beside it)
 * replaces that class's children, one at a time, and the next job runs the
 * new code; another class's children stay. An edit that does not load
 * leaves the children serving the code they run, and the log says why.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { fixture, startSupervisor, type SupervisorHandle } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-watch-');

const version = (tag: string) => `export default async () => '${tag}';\n`;

async function resultOf(sup: SupervisorHandle): Promise<unknown> {
  const { id } = await sup.queue.enqueue({ class: 'edited', payload: {} });
  return (await sup.waitForJob(id, 'SUCCEEDED')).job.result;
}

describe('supervise --watch', () => {
  it("replaces an edited class's children; an edit that does not load keeps them serving", async () => {
    const dir = newDir();
    const handler = path.join(dir, 'edited.mjs');
    writeFileSync(handler, version('v1'));
    const sup = await startSupervisor({
      dir,
      watch: true,
      classes: [
        { name: 'edited', handler, processes: 2 },
        { name: 'other', handler: fixture('succeed') },
      ],
    });
    const otherPids = (await sup.children('other')).map((child) => child.pid);
    const firstPids = (await sup.children('edited')).map((child) => child.pid);
    expect(await resultOf(sup)).toBe('v1');

    writeFileSync(handler, version('v2'));
    await sup.waitForEvent('MODULES_CHANGED', { class: 'edited' });
    await waitFor('both children of edited replaced, the old ones gone', async () => {
      const pids = (await sup.children('edited')).map((child) => child.pid);
      return pids.length === 2 && !pids.some((pid) => firstPids.includes(pid));
    });
    expect(await resultOf(sup)).toBe('v2');
    expect((await sup.children('other')).map((child) => child.pid)).toEqual(otherPids);

    writeFileSync(handler, "export default async () => 'v3' +;\n");
    const refused = await sup.waitForEvent('MODULES_CHANGE_REFUSED', { class: 'edited' });
    expect(refused.reason).toMatch(/SyntaxError: Unexpected token ';' \(at .*edited\.mjs:1:\d+\)/);
    expect(refused.level).toBe('error');
    expect(await resultOf(sup)).toBe('v2');
    expect(sup.events('CHILD_REPLACED')).toHaveLength(2);
    expect(await sup.stop()).toBe(0);
  });
});
