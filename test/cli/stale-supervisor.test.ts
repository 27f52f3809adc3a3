/** `leasehold workers` after a supervisor died without cleaning up: it and its children show as STALE. */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { fixture, isAlive, killLeftovers, leasehold, leaseholdJson, SupervisorRun, writeConfig } from './helpers.js';
import type { WorkersJson } from './json-shapes.js';

const newDir = tempDir('leasehold-cli-');

describe('a supervisor that died without cleaning up', () => {
  let sup: SupervisorRun | undefined;
  afterEach(async () => {
    const killed = await killLeftovers();
    sup = undefined;
    expect(killed).toEqual([]);
  });

  it('workers shows it, and its children, as STALE once its heartbeat is old', async () => {
    const dir = newDir();
    const logFile = join(dir, 'supervisor.log');
    const database = join(dir, 'queue.db');
    const config = writeConfig(join(dir, 'queue.yaml'), {
      database,
      logFile,
      classes: [{ name: 'ok', handler: fixture('ok') }],
    });
    sup = await SupervisorRun.start(config, logFile);
    await sup.waitForEvent('CHILD_READY');
    const children = sup.childPids();
    expect(children.length).toBeGreaterThan(0);
    sup.signal('SIGKILL');
    await sup.waitForExit();
    // Its children notice their parent is gone and exit on their own.
    await waitFor('the orphaned children to exit', () => children.every((pid) => !isAlive(pid)), { timeoutMs: 15_000 });

    const stale = await waitFor(
      'the dead supervisor to show as stale',
      async () => {
        const listed = await leaseholdJson<WorkersJson>(['--db', database, 'workers']);
        return listed.workers.length === 2 && listed.workers.every((w) => w.stale) ? listed : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    const supervisor = stale.workers.find((w) => w.kind === 'supervisor')!;
    expect(supervisor.heartbeat_age_ms).toBeGreaterThan(stale.stale_after_ms);
    expect(supervisor.exited_at).toBeNull();
    const text = (await leasehold(['--db', database, 'workers'])).stdout;
    expect(text).toMatch(/^supervisor\s+\S+\s+\d+\s+-\s+STALE \(ready\)\s/m);
    expect(text).toMatch(
      /^2 worker\(s\) STALE: their supervisor has not refreshed the registry for over 6s \(gone or stuck\)$/m,
    );
  });
});
