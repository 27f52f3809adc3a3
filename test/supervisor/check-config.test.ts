/**
 * `supervise --check-config` refuses exactly what start-up refuses: each
 * entry is one config start-up cannot run, refused by both with exit 2, the
 * same one line naming the field or the file, and nothing written (no
 * database created). A config the check passes starts, and the check imports
 * handlers in a process of its own, never in the one that checks.
 */
import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { fixture, startSupervisor, SUPERVISE_BIN } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-check-');

interface Refusal {
  name: string;
  /** The config's fields beside `database` (relative paths resolve against the config's folder). */
  config: Record<string, unknown>;
  env?: Record<string, string>;
  /** What the one line says after `supervise: <file>: `. */
  line: RegExp;
}

const oneClass = (handler: string) => ({ classes: [{ name: 'work', handler }] });
const dashboardOn = (host: string) => ({ ...oneClass(fixture('succeed')), http: { port: 0, host, dashboard: true } });

const REFUSALS: Refusal[] = [
  {
    name: 'a SQLite database under a file, not a folder',
    config: { ...oneClass(fixture('succeed')), database: fixture('succeed') + '/queue.db' },
    line: /^database: cannot create .*succeed\.mjs\/queue\.db: .*succeed\.mjs is a file, not a folder$/,
  },
  {
    name: 'a handler file that does not exist',
    config: oneClass('./handlers/typo.mjs'),
    line: /^classes\[0\]\.handler: class work: no such file .*handlers\/typo\.mjs$/,
  },
  {
    name: 'a handler file that exports no function',
    config: oneClass(fixture('no-export')),
    line: /^classes\[0\]\.handler: class work: handler .*no-export\.mjs has no default export function$/,
  },
  {
    name: 'a handler module whose parse export is not a function',
    config: oneClass(fixture('parse-not-function')),
    line: /^classes\[0\]\.handler: class work: handler .*parse-not-function\.mjs exports parse, but as a object, not a function$/,
  },
  {
    name: 'a handler module whose top-level code throws',
    config: oneClass(fixture('throws-at-import')),
    line: /^classes\[0\]\.handler: class work: cannot load handler .*throws-at-import\.mjs: DATABASE_URL is not set$/,
  },
  {
    name: 'a middleware module whose top-level code throws',
    config: { ...oneClass(fixture('succeed')), middleware: [fixture('middleware/broken')] },
    line: /^classes\[0\]\.middleware: class work: cannot load middleware .*broken\.mjs: middleware module exploded at import$/,
  },
  {
    name: 'the dashboard on 0.0.0.0 without a token',
    config: dashboardOn('0.0.0.0'),
    line: /^http\.host: the dashboard listens on 0\.0\.0\.0 only with a token \(set LEASEHOLD_DASHBOARD_TOKEN/,
  },
  {
    name: 'the dashboard with a token too short to guard it',
    config: dashboardOn('0.0.0.0'),
    env: { LEASEHOLD_DASHBOARD_TOKEN: 'short' },
    line: /^LEASEHOLD_DASHBOARD_TOKEN: the dashboard token must be at least 16 characters/,
  },
];

describe('supervise --check-config refuses what start-up refuses', () => {
  it.each(REFUSALS)('$name: exit 2, one line naming it, from both; nothing written', async ({ config, env, line }) => {
    const dir = newDir();
    const database = path.join(dir, 'queue.db');
    const file = path.join(dir, 'queue.yaml');
    writeFileSync(file, stringify({ database, ...config }));
    const written = (config.database as string | undefined) ?? database;
    const run = (...extra: string[]) =>
      execa('node', [SUPERVISE_BIN, '--config', file, ...extra], {
        reject: false,
        timeout: 30_000,
        env: { LEASEHOLD_DASHBOARD_TOKEN: '', ...env },
      });

    const check = await run('--check-config');
    const start = await run();
    for (const result of [check, start]) {
      expect(result.exitCode, result.stderr).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]!.startsWith(`supervise: ${file}: `), lines[0]).toBe(true);
      expect(lines[0]!.slice(`supervise: ${file}: `.length)).toMatch(line);
    }
    expect(start.stderr).toBe(check.stderr);
    expect(existsSync(written), 'start-up refused before it created the database').toBe(false);
  });
});

describe('a config the check passes', () => {
  it('starts, and its handlers were imported by a probe process, not by the checking process', async () => {
    const dir = newDir();
    const marker = path.join(dir, 'imports.txt');
    const env = { IMPORT_MARKER: marker };
    const file = path.join(dir, 'queue.yaml');
    writeFileSync(file, stringify({ database: path.join(dir, 'queue.db'), ...oneClass(fixture('import-marker')) }));

    const checking = execa('node', [SUPERVISE_BIN, '--config', file, '--check-config'], {
      reject: false,
      timeout: 30_000,
      env,
    });
    const checkPid = checking.pid;
    const check = await checking;
    expect(check.exitCode, check.stderr).toBe(0);
    expect(check.stdout).toContain(`${file}: OK`);
    const imports = readFileSync(marker, 'utf8')
      .trim()
      .split('\n')
      .map((entry) => entry.split(' ').map(Number));
    expect(imports).toHaveLength(1);
    const [probePid, probeParent] = imports[0]!;
    expect(checkPid).toBeGreaterThan(0);
    expect(probePid).not.toBe(checkPid);
    expect(probeParent).toBe(checkPid);

    // Without IMPORT_MARKER the module records nothing: the same config, started for real.
    const sup = await startSupervisor({ dir, classes: [{ name: 'work', handler: 'import-marker' }] });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(id, 'SUCCEEDED');
    expect(await sup.stop()).toBe(0);
  });
});
