/**
 * The package as a user gets it: `npm pack` the built project, install the
 * tarball into a fresh folder, and there run both binaries, import the
 * library, typecheck against its types, have the installed supervisor run
 * a job, and the installed dashboard serve its pages and assets. Needs
 * `npm run build` first (`npm run test:all` does it).
 */
import { execa, type Options } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { openQueue } from '../../src/queue/queue.js';
import { PG_URL, pgUrl, schemaPool } from '../helpers/postgres.js';
import { onCleanup, trackLogFile, trackProcess, trackWorkersDatabase, useProcessGuard } from '../helpers/processes.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';
import { filesUnder, provideSqliteAddon, workersApp } from './package-apps.js';

useProcessGuard();
const newDir = tempDir('leasehold-package-');
const schemas = schemaPool('lh_package');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

let tarball = ''; // what `npm pack` made
let app = ''; // the user's fresh folder, leasehold installed in it
let installed = ''; // app/node_modules/leasehold

/** A command in the user's folder, never rejecting: the test looks at the exit code. */
function inApp(file: string, args: string[], options: Options = {}) {
  return execa(file, args, { cwd: app, reject: false, stdin: 'ignore', timeout: 60_000, ...options });
}

beforeAll(async () => {
  if (!existsSync(path.join(ROOT, 'dist/index.js'))) throw new Error('no dist/index.js: run `npm run build` first');
  const dir = newDir();
  const packed = await execa('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, timeout: 60_000 });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  tarball = path.join(dir, filename);

  app = path.join(dir, 'app');
  mkdirSync(app);
  // A version of its own, for --version to be told apart from leasehold's.
  writeFileSync(
    path.join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '9.9.9', private: true, type: 'module' }),
  );
  const started = Date.now();
  // Dependencies come from the npm cache that `npm ci` filled.
  await execa(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(dir, filename)],
    {
      cwd: app,
      timeout: 120_000,
    },
  );
  await provideSqliteAddon(app);
  console.log(`installed ${filename} in ${Date.now() - started} ms`);
  installed = path.join(app, 'node_modules/leasehold');
}, 300_000);

describe('the installed package', () => {
  it('holds the built code, its types, the README, the example config and its handlers, and nothing else', () => {
    const files = filesUnder(installed);
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    const example = parse(readFileSync(path.join(installed, 'config.example.yaml'), 'utf8')) as {
      classes: { handler: string }[];
    };
    const needed = [
      'README.md',
      'dist/index.js',
      'dist/index.d.ts',
      // spawned by path at run time: nothing before a job runs would miss it
      'dist/child/main.js',
      ...Object.values(manifest.bin),
      ...example.classes.map((cls) => path.posix.normalize(cls.handler)),
    ];
    expect(needed.filter((file) => !files.includes(file))).toEqual([]);

    const unwanted = files.filter(
      (file) =>
        /^(test|scripts|bench|dist\/test|dist\/scripts|\.ci)\//.test(file) ||
        (file.endsWith('.ts') && !file.endsWith('.d.ts')) ||
        file.endsWith('.map') ||
        file.startsWith('tsconfig') ||
        file.startsWith('vitest'),
    );
    expect(unwanted).toEqual([]);
    console.log(`${files.length} files in the installed package`);
  });

  it('resolves every link of its README and of its docs to a file it holds', () => {
    const pages = filesUnder(installed).filter((file) => file === 'README.md' || /^docs\/.*\.md$/.test(file));
    expect(pages.length).toBeGreaterThan(10);
    const broken = pages.flatMap((page) =>
      [...readFileSync(path.join(installed, page), 'utf8').matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1]!)
        .filter((target) => !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(path.join(installed, path.dirname(page), target)))
        .map((target) => `${page} -> ${target}`),
    );
    expect(broken).toEqual([]);
  });

  it('passes publint, warnings and suggestions included', async () => {
    const linted = await execa('npx', ['publint', 'run', tarball, '--strict'], { cwd: ROOT, reject: false });
    expect(linted.exitCode, linted.stdout + linted.stderr).toBe(0);
  });

  it('has types that resolve for ESM consumers (node16 and bundlers), as Are The Types Wrong checks', async () => {
    // ESM only: a CommonJS consumer on Node 20 loads it with import(), which the esm-only profile allows.
    const checked = await execa('npx', ['attw', tarball, '--profile', 'esm-only', '--format', 'ascii'], {
      cwd: ROOT,
      reject: false,
    });
    expect(checked.exitCode, checked.stdout + checked.stderr).toBe(0);
  });

  it('is found by what it is: its keywords', () => {
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ keywords: expect.arrayContaining(['job queue', 'sqlite', 'postgresql']) });
  });

  it('`supervise --check-config` accepts the packaged config.example.yaml', async () => {
    const result = await inApp('npx', [
      'supervise',
      '--config',
      'node_modules/leasehold/config.example.yaml',
      '--check-config',
    ]);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(result.stdout).toMatch(/config\.example\.yaml: OK \(\d+ classes/);
  });

  it("`--version` of both binaries prints leasehold's version, not the app's", async () => {
    const { version } = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as { version: string };
    const results = await Promise.all(
      ['leasehold', 'supervise'].map(async (bin) => ({ bin, ...(await inApp('npx', [bin, '--version'])) })),
    );
    expect(results.map(({ bin, exitCode, stdout }) => ({ bin, exitCode, stdout }))).toEqual(
      ['leasehold', 'supervise'].map((bin) => ({ bin, exitCode: 0, stdout: version })),
    );
  });

  it('`leasehold --help` prints the usage', async () => {
    const result = await inApp('npx', ['leasehold', '--help']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(result.stdout).toMatch(/^leasehold .*<command>/);
    expect(result.stdout).toMatch(/leasehold enqueue/);
  });

  it('imports migrate and openQueue, enqueues into a SQLite file and reads the job back', async () => {
    const script = `
      import { migrate, openQueue } from 'leasehold';
      await migrate({ database: 'library.db' });
      const queue = await openQueue({ database: 'library.db' });
      const { id } = await queue.enqueue({ class: 'email', payload: { to: 'a@b' } });
      const { job } = await queue.get(id);
      await queue.close();
      console.log(JSON.stringify({ id, class: job.class, status: job.status, payload: job.payload }));
    `;
    const result = await inApp('node', ['--input-type=module', '-e', script]);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(JSON.parse(String(result.stdout))).toEqual({
      id: 1,
      class: 'email',
      status: 'QUEUED',
      payload: { to: 'a@b' },
    });
  });

  it('its types check in a strict TypeScript consumer', async () => {
    writeFileSync(
      path.join(app, 'consumer.ts'),
      `import { openQueue, type JobRow } from 'leasehold';\n` +
        `const queue = await openQueue({ database: 'types.db' });\n` +
        `const jobs: JobRow[] = await queue.list({ status: 'QUEUED' });\n` +
        `console.log(jobs.length);\n`,
    );
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    // The project's TypeScript and @types/node; no skipLibCheck, so the package's .d.ts files are checked too.
    const result = await inApp('node', [
      tsc,
      ...['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext'],
      ...['--typeRoots', path.join(ROOT, 'node_modules/@types'), '--types', 'node', 'consumer.ts'],
    ]);
    expect(result.exitCode, String(result.stdout)).toBe(0);
  });

  it('its `leasehold dashboard` serves the pages with every asset from the installed packages, and stops on SIGTERM', async () => {
    expect((await inApp('npx', ['leasehold', '--db', 'dashboard.db', 'migrate'])).exitCode).toBe(0);
    const dashboard = execa(
      path.join(app, 'node_modules/.bin/leasehold'),
      ['--db', 'dashboard.db', 'dashboard', '--port', '0', '--json'],
      {
        cwd: app,
        reject: false,
        stdin: 'ignore',
        buffer: false,
        timeout: 60_000,
      },
    );
    trackProcess(dashboard.pid as number, 'installed leasehold dashboard');
    let printed = '';
    dashboard.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
    try {
      const { url } = await waitFor('the dashboard to print its URL', () =>
        printed.includes('}') ? (JSON.parse(printed) as { url: string }) : undefined,
      );
      const page = await fetch(url);
      expect(page.status).toBe(200);
      const linked = [...(await page.text()).matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
      expect(linked.sort()).toEqual([
        '/assets/app.css',
        '/assets/app.js',
        '/assets/htmx.min.js',
        '/assets/pico.min.css',
      ]);
      for (const asset of linked) expect((await fetch(new URL(asset, url))).status, asset).toBe(200);
    } finally {
      dashboard.kill('SIGTERM');
    }
    expect((await dashboard).exitCode).toBe(0);
  });

  it('its supervisor runs a job enqueued with its `leasehold`, then drains on SIGTERM', async () => {
    writeFileSync(path.join(app, 'echo.js'), 'export default async (job) => ({ echoed: job.payload });\n');
    const database = path.join(app, 'queue.db');
    const logFile = path.join(app, 'supervisor.log');
    writeFileSync(
      path.join(app, 'queue.yaml'),
      `database: ./queue.db\nlog: { file: ./supervisor.log }\nclasses:\n  - { name: echo, handler: ./echo.js, poll_seconds: 0.1 }\n`,
    );
    expect((await inApp('npx', ['leasehold', '--config', 'queue.yaml', 'migrate'])).exitCode).toBe(0);
    const enqueued = await inApp('npx', [
      'leasehold',
      '--config',
      'queue.yaml',
      'enqueue',
      'echo',
      '--payload',
      '{"n":1}',
      '--json',
    ]);
    expect(enqueued.exitCode, String(enqueued.stderr)).toBe(0);
    const { id } = JSON.parse(String(enqueued.stdout)) as { id: number };

    // The bin link itself, as a PATH lookup would run it: the signal reaches the supervisor, not an npx in between.
    const supervisor = execa(path.join(app, 'node_modules/.bin/supervise'), ['--config', 'queue.yaml'], {
      cwd: app,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    trackProcess(supervisor.pid as number, 'installed supervisor');
    trackLogFile(logFile);
    trackWorkersDatabase(database);
    let exited = false;
    void supervisor.finally(() => (exited = true));

    const queue = await openQueue({ database });
    onCleanup(() => queue.close());
    const done = await waitFor('the job to succeed', async () => {
      if (exited) throw new Error(`the supervisor exited:\n${String((await supervisor).stderr)}`);
      const details = await queue.get(id);
      return details?.job.status === 'SUCCEEDED' ? details.job : undefined;
    }).finally(() => supervisor.kill('SIGTERM')); // drain and stop, however the wait went
    expect(done.result).toEqual({ echoed: { n: 1 } });
    const result = await supervisor;
    expect(result.exitCode).toBe(0);
  });
  // Last: it installs tsx into the app.
  it('takes a .ts handler: without tsx, --check-config says what to install; with tsx, an app runs it on SQLite and on PostgreSQL', async () => {
    writeFileSync(
      path.join(app, 'receipt.ts'),
      'export default async (job: { payload: { n: number } }) => job.payload.n;\n',
    );
    const database = pgUrl(schemas.next());
    for (const [file, db] of [
      ['ts-queue.yaml', './ts.db'],
      ['ts-pg.yaml', database],
    ])
      writeFileSync(
        path.join(app, file!),
        `database: '${db}'\nclasses:\n  - { name: receipts, handler: ./receipt.ts }\n`,
      );
    const check = () => inApp('npx', ['supervise', '--config', 'ts-queue.yaml', '--check-config']);
    const without = await check();
    expect(without.exitCode).toBe(2);
    expect(String(without.stderr)).toContain(
      `${path.join(app, 'receipt.ts')} is TypeScript, and Node ${process.version} cannot strip types: install tsx`,
    );

    const tsx = await inApp(
      'npm',
      ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', 'tsx@4'],
      {
        timeout: 120_000,
      },
    );
    expect(tsx.exitCode, String(tsx.stderr)).toBe(0);
    const withTsx = await check();
    expect(withTsx.exitCode, String(withTsx.stderr)).toBe(0);
    expect(withTsx.stdout).toMatch(/ts-queue\.yaml: OK \(1 classes: receipts\)/);

    const request = "{ class: 'receipts', payload: { n: 41 } }";
    writeFileSync(path.join(app, 'workers.mjs'), workersApp('sqlite', { config: 'ts-queue.yaml', request }));
    writeFileSync(path.join(app, 'workers-pg.mjs'), workersApp('postgres', { config: 'ts-pg.yaml', request }));
    trackWorkersDatabase(path.join(app, 'ts.db'));
    for (const run of [
      ['workers.mjs', './ts.db'],
      ['workers-pg.mjs', database, PG_URL],
    ]) {
      const workers = await inApp('node', run);
      expect(workers.exitCode, String(workers.stderr)).toBe(0);
      expect(JSON.parse(String(workers.stdout))).toEqual({ status: 'SUCCEEDED', result: 41, jobs: 1 });
    }
  }, 180_000);

  it('installs for a PostgreSQL-only app with --omit=optional: nothing built, its supervisor runs a job', async () => {
    const pgApp = path.join(path.dirname(app), 'pg-app');
    mkdirSync(pgApp);
    writeFileSync(path.join(pgApp, 'package.json'), JSON.stringify({ name: 'pg-only', private: true, type: 'module' }));
    // Install scripts run (no --ignore-scripts): only an absent native package proves none was built.
    const install = await execa(
      'npm',
      ['install', '--omit=optional', '--prefer-offline', '--no-audit', '--no-fund', tarball],
      { cwd: pgApp, reject: false, timeout: 120_000 },
    );
    expect(install.exitCode, String(install.stderr)).toBe(0);
    const modules = path.join(pgApp, 'node_modules');
    expect(existsSync(path.join(modules, 'better-sqlite3'))).toBe(false);
    expect(readdirSync(modules, { recursive: true }).filter((entry) => String(entry).endsWith('.node'))).toEqual([]);

    const database = pgUrl(schemas.next());
    writeFileSync(path.join(pgApp, 'twice.mjs'), 'export default async (job) => job.payload.n * 2;\n');
    writeFileSync(
      path.join(pgApp, 'queue.yaml'),
      `database: ${JSON.stringify(database)}\nclasses:\n  - { name: twice, handler: ./twice.mjs, poll_seconds: 0.1 }\n`,
    );
    const sqlite = "await openQueue({ database: './queue.db' }).then(() => 'opened', (error) => error.message)";
    const request = "{ class: 'twice', payload: { n: 21 } }";
    writeFileSync(
      path.join(pgApp, 'app.mjs'),
      workersApp('postgres', { config: 'queue.yaml', request, extra: `{ sqlite: ${sqlite} }` }),
    );
    const run = await execa('node', ['app.mjs', database, PG_URL], { cwd: pgApp, reject: false, timeout: 60_000 });
    expect(run.exitCode, String(run.stderr)).toBe(0);
    expect(JSON.parse(String(run.stdout))).toEqual({
      status: 'SUCCEEDED',
      result: 42,
      jobs: 1,
      sqlite:
        'a SQLite database needs the better-sqlite3 package, which is not installed (it is an optional dependency of leasehold): npm install better-sqlite3',
    });
  }, 180_000);
});
