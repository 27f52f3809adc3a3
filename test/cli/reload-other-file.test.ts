/**
 * `leasehold --config mine.yaml reload` while this host's supervisor runs
 * another file: SIGHUP would make it re-read its own file, not mine.yaml, and
 * "nothing changed" would be a lie about mine.yaml. It is refused (exit 2),
 * naming the file the supervisor reads, and nobody is signalled.
 */
import { execa } from 'execa';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-reload-other-');
const CLI = fileURLToPath(new URL('../../dist/cli/leasehold.js', import.meta.url));

describe('leasehold reload with a file the supervisor does not run', () => {
  it('exits 2 naming the file the supervisor reads, and sends no SIGHUP', async () => {
    const dir = newDir();
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'succeed', processes: 1 }] });
    // Same database, same host: only the file differs.
    const mine = path.join(dir, 'mine.yaml');
    writeFileSync(mine, readFileSync(sup.configFile, 'utf8').replace('processes: 1', 'processes: 2'));

    const cli = await execa('node', [CLI, '--config', mine, 'reload'], {
      reject: false,
      env: { ...process.env, LEASEHOLD_HOST: undefined },
    });
    expect(cli.exitCode, cli.stdout).toBe(2);
    expect(cli.stdout).toBe('');
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).toContain(`runs ${sup.configFile} (pid ${sup.pid}), not ${mine}`);
    expect(sup.events('CONFIG_RELOADED')).toEqual([]);
    expect(sup.events('CONFIG_RELOAD_REJECTED')).toEqual([]);
    expect(await sup.stop()).toBe(0);
  });
});
