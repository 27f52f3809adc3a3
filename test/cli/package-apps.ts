/**
 * For the installed package's test (package.test.ts): what lies in a
 * folder, the SQLite addon for an install that skipped scripts, and the
 * app that starts its workers from its own code.
 */
import { execa } from 'execa';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** Every file under dir, relative to it, skipping nested node_modules. */
export function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(prefix, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(dir, relative);
    return [relative];
  });
}

/**
 * better-sqlite3's install script downloads a prebuilt addon from GitHub or,
 * offline, compiles SQLite from source (about 80 s on two cores). So the
 * install skips scripts (leasehold has none of its own) and the addon the
 * project's `npm ci` built, for this same Node, is copied in when the versions
 * match; otherwise it is built for real.
 */
export async function provideSqliteAddon(app: string): Promise<void> {
  const ours = path.dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json'));
  const theirs = path.join(app, 'node_modules/better-sqlite3');
  const version = (dir: string) =>
    (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  const addon = 'build/Release/better_sqlite3.node';
  if (version(ours) === version(theirs) && existsSync(path.join(ours, addon))) {
    mkdirSync(path.join(theirs, 'build/Release'), { recursive: true });
    copyFileSync(path.join(ours, addon), path.join(theirs, addon));
  } else {
    await execa('npm', ['rebuild', 'better-sqlite3'], { cwd: app, timeout: 240_000 });
  }
}

/** The enqueue inside the app's own transaction: a rolled-back one leaves no job (the app counts them), a committed one runs. */
const OWN_TRANSACTION = {
  sqlite: `import Database from 'better-sqlite3';
const db = new Database(database);
db.exec('CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY, item TEXT)');
const inTransaction = (item, fail) =>
  db.transaction(() => {
    db.prepare('INSERT INTO orders (item) VALUES (?)').run(item);
    const { id } = queue.enqueueSync(request, { tx: db });
    if (fail) throw new Error('rolled back');
    return id;
  })();
try { inTransaction('lost', true); } catch {}
const id = inTransaction('book', false);
db.close();`,
  postgres: `import pg from 'pg';
const db = new pg.Client({ connectionString: process.argv[3] });
await db.connect();
const inTransaction = async (end) => {
  await db.query('BEGIN');
  await db.query('CREATE TEMP TABLE IF NOT EXISTS orders (item text)');
  await db.query("INSERT INTO orders VALUES ('book')");
  const { id } = await queue.enqueue(request, { tx: db });
  await db.query(end);
  return id;
};
await inTransaction('ROLLBACK');
const id = await inTransaction('COMMIT');
await db.end();`,
};

/**
 * An app that starts the supervisor from its own code, by the package's
 * names, enqueues one job in its own transaction (after one rolled back),
 * waits for it, stops, and prints what it saw. Its database is its first
 * argument; on PostgreSQL, its own client's URL the second.
 */
export function workersApp(
  driver: 'sqlite' | 'postgres',
  options: { config: string; request: string; extra?: string },
): string {
  return `import { openQueue, startSupervisor } from 'leasehold';
const database = process.argv[2];
const request = ${options.request};
const workers = await startSupervisor({ config: '${options.config}', console: false });
await workers.ready;
const queue = await openQueue({ database });
${OWN_TRANSACTION[driver]}
const job = await queue.waitFor(id, { timeoutMs: 30_000 });
const jobs = (await queue.list()).map((row) => row.id);
const seen = { status: job.status, result: job.result, jobs: jobs.length, ...${options.extra ?? '{}'} };
await queue.close();
await workers.stop();
console.log(JSON.stringify(seen));
`;
}
