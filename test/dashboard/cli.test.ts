/**
 * `leasehold dashboard` as an operator runs it: it prints its URL, serves
 * the pages without a supervisor, and exits 0 on SIGTERM or SIGINT; it
 * refuses (exit 2, one line) to listen beyond loopback without a token. The
 * supervisor refuses `http.dashboard` on such an address alike.
 */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { openQueue } from '../../src/queue/queue.js';
import { LEASEHOLD_BIN, SUPERVISE_BIN } from '../cli/helpers.js';
import { trackProcess, useProcessGuard } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { textOf, TOKEN } from './helpers.js';

useProcessGuard();
const newDir = tempDir('leasehold-dashboard-cli-');

/** A database with one job in it; its path. */
async function database(): Promise<string> {
  const file = path.join(newDir(), 'queue.db');
  await migrate({ database: file });
  const queue = await openQueue({ database: file });
  await queue.enqueue({ class: 'email', payload: { to: 'a@b' } });
  await queue.close();
  return file;
}

/** `leasehold dashboard` running; its URL once it has printed it. */
async function runDashboard(args: string[], env: Record<string, string> = {}) {
  const child = execa('node', [LEASEHOLD_BIN, ...args, 'dashboard', '--port', '0', '--json'], {
    reject: false,
    stdin: 'ignore',
    env,
    buffer: false,
  });
  trackProcess(child.pid!, 'leasehold dashboard');
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const started = await waitFor('the dashboard to print its URL', () => {
    if (child.exitCode !== null) throw new Error(`leasehold dashboard exited ${child.exitCode}: ${printed}`);
    return /^\{[\s\S]*\}\n/.test(printed)
      ? (JSON.parse(printed) as { url: string; read_only: boolean; token_required: boolean })
      : undefined;
  });
  return { child, ...started, output: () => printed };
}

describe('leasehold dashboard', () => {
  it('prints its URL, serves the pages and their assets, and exits 0 on SIGTERM', async () => {
    const db = await database();
    const run = await runDashboard(['--db', db]);
    expect(run.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(run).toMatchObject({ read_only: false, token_required: false });
    const page = await fetch(run.url);
    expect(page.status).toBe(200);
    expect(textOf(await page.text())).toMatch(/1 QUEUED/);
    // Its own scripts and styles too, which the command's bundle keeps beside it (scripts/bundle-cli.ts).
    for (const asset of ['app.js', 'app.css', 'htmx.min.js', 'pico.min.css'])
      expect((await fetch(new URL(`assets/${asset}`, run.url))).status, asset).toBe(200);
    run.child.kill('SIGTERM');
    expect((await run.child).exitCode).toBe(0);
  });

  it('--read-only with a token from the environment; SIGINT stops it too', async () => {
    const db = await database();
    const run = await runDashboard(['--db', db, '--read-only'], { LEASEHOLD_DASHBOARD_TOKEN: TOKEN });
    expect(run).toMatchObject({ read_only: true, token_required: true });
    expect((await fetch(run.url)).status).toBe(401);
    const page = await fetch(run.url, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await page.text()).toContain('read-only');
    run.child.kill('SIGINT');
    expect((await run.child).exitCode).toBe(0);
  });

  it('refuses, exit 2 in one line: another address without a token, a short token, a bad port, no database', async () => {
    const db = await database();
    const cases = [
      [
        ['--db', db, 'dashboard', '--host', '0.0.0.0'],
        /^leasehold: the dashboard listens on 0\.0\.0\.0 only with a token/,
      ],
      [['--db', db, 'dashboard', '--token', 'short'], /^leasehold: the dashboard token must be at least 16 characters/],
      [
        ['--db', db, 'dashboard', '--port', '70000'],
        /^leasehold: --port: expected an integer from 0 to 65535, got "70000"/,
      ],
      [['--db', path.join(newDir(), 'none.db'), 'dashboard'], /^leasehold: no database at /],
    ] as const;
    for (const [args, says] of cases) {
      const result = await execa('node', [LEASEHOLD_BIN, ...args], {
        reject: false,
        stdin: 'ignore',
        env: { LEASEHOLD_DASHBOARD_TOKEN: '' },
        timeout: 30_000,
      });
      expect(result.exitCode, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(says);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it('supervise refuses http.dashboard on a non-loopback address without LEASEHOLD_DASHBOARD_TOKEN', async () => {
    const dir = newDir();
    const config = path.join(dir, 'queue.yaml');
    writeFileSync(
      config,
      `database: ${path.join(dir, 'queue.db')}\nlog: { file: ${path.join(dir, 'supervisor.log')} }\nhttp: { port: 0, host: 0.0.0.0, dashboard: true }\nclasses:\n  - { name: email, handler: ${path.join(dir, 'h.mjs')} }\n`,
    );
    writeFileSync(path.join(dir, 'h.mjs'), 'export default async () => null;\n');
    const result = await execa('node', [SUPERVISE_BIN, '--config', config], {
      reject: false,
      stdin: 'ignore',
      env: { LEASEHOLD_DASHBOARD_TOKEN: '' },
      timeout: 30_000,
    });
    expect(result.exitCode).toBe(2);
    // The config check's one line, naming the file and the field, as --check-config gives it.
    expect(result.stderr).toMatch(
      /^supervise: .*queue\.yaml: http\.host: the dashboard listens on 0\.0\.0\.0 only with a token \(set LEASEHOLD_DASHBOARD_TOKEN/,
    );
  });
});
