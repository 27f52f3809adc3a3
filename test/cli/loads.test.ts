/**
 * A command loads only what it needs (issue 14: every `leasehold` run paid
 * for the PostgreSQL client and every command's module). Each case runs the
 * real binary in a child process under a preload that writes down every
 * module the process loaded, and reads that list.
 */
import { execa } from 'execa';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { ROOT } from '../helpers/sources.js';
import { tempDir } from '../helpers/temp.js';
import { fixture, LEASEHOLD_BIN, leaseholdJson, writeConfig } from './helpers.js';

const newDir = tempDir('leasehold-loads-');
let dir = '';
let database = '';
let configFile = '';

/** Runs `leasehold ...args`; returns the modules it loaded (file URLs and paths) after checking it exited 0. */
async function modulesLoadedBy(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  const logFile = join(dir, `modules-${args.join('-').replace(/[^a-z0-9-]/gi, '')}.txt`);
  const result = await execa('node', ['--import', fixture('module-log'), LEASEHOLD_BIN, ...args], {
    reject: false,
    input: '',
    timeout: 30_000,
    env: { LEASEHOLD_MODULE_LOG: logFile, ...env },
  });
  expect(result.stderr).toBe('');
  expect(result.exitCode).toBe(0);
  return readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
}

const packagesIn = (modules: string[]) =>
  new Set(modules.map((module) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(module)?.[1]).filter(Boolean));
/** The bundle's chunk of each command module (`dist/cli/enqueue-HASH.js`, scripts/bundle-cli.ts), named by the module. */
const COMMAND_CHUNK = new RegExp(
  `/dist/cli/(${readdirSync(join(ROOT, 'src/cli/commands'))
    .map((file) => file.replace(/\.ts$/, ''))
    .join('|')})-[A-Z0-9]+\\.js$`,
);
const commandModulesIn = (modules: string[]) => [
  ...new Set(modules.map((module) => COMMAND_CHUNK.exec(module)?.[1]).filter(Boolean)),
];

beforeAll(async () => {
  dir = newDir();
  database = join(dir, 'queue.db');
  configFile = writeConfig(join(dir, 'queue.yaml'), {
    database,
    logFile: join(dir, 'supervisor.log'),
    classes: [{ name: 'ok', handler: fixture('ok') }],
  });
  await migrate({ database });
  expect(await leaseholdJson(['--config', configFile, 'enqueue', 'ok', '--payload', '{}'])).toEqual({
    id: 1,
    created: true,
  });
});

describe('on SQLite with --db', () => {
  const CASES: [string, () => string[]][] = [
    ['enqueue', () => ['--db', database, 'enqueue', 'ok', '--allow-unknown-class', '--payload', '{}']],
    ['show', () => ['--db', database, 'show', '1']],
    ['stats', () => ['--db', database, 'stats', '--json']],
    ['list', () => ['--db', database, 'list']],
  ];

  it.each(CASES)(
    '%s loads its own command, the SQLite driver, and no PostgreSQL client, logger, metrics, config parser or yargs',
    async (command, args) => {
      const modules = await modulesLoadedBy(args());
      const packages = packagesIn(modules);
      // The log sees both kinds of module: better-sqlite3 is CommonJS, the commands are ES modules.
      expect(packages.has('better-sqlite3')).toBe(true);
      expect(commandModulesIn(modules)).toEqual([command]);
      for (const unneeded of ['pg', 'prom-client', 'winston', 'yaml', 'zod', 'yargs'])
        expect(packages.has(unneeded), unneeded).toBe(false);
      // The bundle runs whole: none of tsc's modules, which would be loaded one file at a time.
      expect(modules.filter((module) => module.includes('/dist/src/'))).toEqual([]);
      // OpenTelemetry is installed here, with no SDK registered and no TRACEPARENT: nothing to join or send to.
      expect(packages.has('@opentelemetry/api'), '@opentelemetry/api').toBe(false);
    },
  );

  it('enqueue loads OpenTelemetry when its environment names a trace to join', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const args = ['--db', database, 'enqueue', 'ok', '--allow-unknown-class', '--payload', '{}'];
    const modules = await modulesLoadedBy(args, { TRACEPARENT: traceparent });
    expect(packagesIn(modules).has('@opentelemetry/api')).toBe(true);
  });
});

describe('with --config', () => {
  it('stats reads the config (yaml, zod) and still loads no PostgreSQL client, logger, metrics or yargs', async () => {
    const packages = packagesIn(await modulesLoadedBy(['--config', configFile, 'stats', '--json']));
    expect(packages.has('yaml') && packages.has('zod')).toBe(true);
    for (const unneeded of ['pg', 'prom-client', 'winston', 'yargs'])
      expect(packages.has(unneeded), unneeded).toBe(false);
  });
});

describe('words the fast path leaves to yargs', () => {
  it('--help loads yargs and every command, and still no PostgreSQL client', async () => {
    const modules = await modulesLoadedBy(['--help']);
    expect(packagesIn(modules).has('yargs')).toBe(true);
    expect(commandModulesIn(modules).length).toBeGreaterThan(10);
    expect(packagesIn(modules).has('pg')).toBe(false);
  });
});
