/**
 * The database's faults, for real, for the suites in test/faults: the
 * PostgreSQL server stopped and started (pg_ctlcluster), the queue's backends
 * terminated, a SQLite file held under an exclusive lock by another process,
 * and a small tmpfs filled to the last byte. Each fault has an afterEach that
 * undoes it, so a failing test still leaves PostgreSQL running and nothing
 * mounted.
 *
 * PostgreSQL is shared with other test runs on this machine: run a file that
 * terminates backends under `flock -s /tmp/leasehold-pg.lock`, and one that
 * stops the server under `flock -x /tmp/leasehold-pg.lock`.
 */
import { execa, type ResultPromise } from 'execa';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';
import { adminClient, PG_URL } from './postgres.js';
import { trackProcess } from './processes.js';
import { waitFor } from './wait.js';

// ---- PostgreSQL: stop, start, terminate backends

const PG_TARGET = new URL(PG_URL);
const PG_HOST = PG_TARGET.hostname || '127.0.0.1';
const PG_PORT = PG_TARGET.port || '5432';

/** This machine's cluster version (`/etc/postgresql/<version>/main`). */
function clusterVersion(): string {
  const versions = readdirSync('/etc/postgresql').sort();
  if (versions.length !== 1)
    throw new Error(`expected one PostgreSQL cluster under /etc/postgresql, found: ${versions.join(', ') || 'none'}`);
  return versions[0]!;
}

/**
 * Closes every file descriptor but stdio, then runs the command. The server that `start` leaves
 * running must not inherit ours: under `flock -x /tmp/leasehold-pg.lock npx vitest ...` one of them
 * is the lock, and postgres would hold it (and block every other PostgreSQL run) until it stops.
 */
const WITHOUT_OUR_FDS =
  'for fd in /proc/self/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done; exec "$@"';

function pgCtl(action: 'start' | 'stop') {
  const args = ['--skip-systemctl-redirect', clusterVersion(), 'main', action];
  return execa('bash', ['-c', WITHOUT_OUR_FDS, 'bash', 'pg_ctlcluster', ...args], {
    reject: false,
    timeout: 60_000,
    stdin: 'ignore',
  });
}

export async function postgresReady(): Promise<boolean> {
  const probe = await execa('pg_isready', ['-h', PG_HOST, '-p', PG_PORT], { reject: false, timeout: 10_000 });
  return probe.exitCode === 0;
}

/** Stop the server (fast shutdown: every session is cut); resolves once it no longer accepts connections. */
export async function stopPostgres(): Promise<void> {
  const stopped = await pgCtl('stop');
  if (stopped.exitCode !== 0) throw new Error(`pg_ctlcluster stop failed (${stopped.exitCode}): ${stopped.stderr}`);
  await waitFor('PostgreSQL to refuse connections', async () => !(await postgresReady()), {
    timeoutMs: 10_000,
    intervalMs: 100,
  });
}

/** Start the server unless it runs, and wait until `pg_isready` says it accepts connections. */
export async function startPostgres(timeoutMs = 60_000): Promise<void> {
  if (await postgresReady()) return;
  const started = await pgCtl('start');
  await waitFor('PostgreSQL to accept connections again', postgresReady, { timeoutMs, intervalMs: 200 }).catch(
    (error: unknown) => {
      throw new Error(`${(error as Error).message}; pg_ctlcluster start: exit ${started.exitCode} ${started.stderr}`);
    },
  );
}

/**
 * Call at the top of a file that stops PostgreSQL, after useProcessGuard(): vitest runs afterEach
 * hooks last-registered first (and skips the rest once one throws), so the server is back before the
 * guard reads the workers table, whatever the guard finds.
 */
export function usePostgresRestore(): void {
  afterEach(() => startPostgres(), 90_000);
}

/**
 * Terminate every backend whose application_name is `name` (the supervisor and its children get it
 * from PGAPPNAME), never the test's own; returns how many were terminated.
 */
export async function terminateBackends(name: string): Promise<number> {
  const client = await adminClient();
  try {
    const { rows } = await client.query<{ n: string }>(
      'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()',
      [name],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

// ---- SQLite: another process holding the write lock

const LOCK_HOLDER = fileURLToPath(new URL('../fixtures/sqlite-lock-holder.mjs', import.meta.url));

export interface LockHolder {
  pid: number;
  /** When the holder had the lock (Date.now() of this process). */
  lockedAt: number;
  /** Let go (COMMIT) and wait for the holder to exit; safe twice. */
  release(): Promise<void>;
}

/** Another process takes `BEGIN EXCLUSIVE` on the database; resolves once it holds it. */
export async function holdExclusiveLock(database: string): Promise<LockHolder> {
  const holder: ResultPromise<{ reject: false; stdin: 'pipe' }> = execa('node', [LOCK_HOLDER, database, '120000'], {
    reject: false,
    stdin: 'pipe',
  });
  const pid = holder.pid;
  if (pid === undefined) throw new Error('could not spawn the lock holder');
  trackProcess(pid, `sqlite lock holder on ${database}`);
  let printed = '';
  holder.stdout?.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  let ended = false;
  const exit = holder.then((result) => {
    ended = true;
    return result;
  });
  await waitFor(
    'the lock holder to hold BEGIN EXCLUSIVE',
    () => {
      if (ended) throw new Error(`the lock holder exited before taking the lock: ${printed}`);
      return printed.includes('locked\n');
    },
    { timeoutMs: 20_000 },
  );
  const lockedAt = Date.now();
  let releasing: Promise<void> | undefined;
  return {
    pid,
    lockedAt,
    release() {
      releasing ??= (async () => {
        if (!ended) holder.stdin?.end('release\n');
        const result = await exit;
        if (result.exitCode !== 0)
          throw new Error(`the lock holder exited ${result.exitCode} ${result.signal ?? ''}: ${result.stderr}`);
      })();
      return releasing;
    },
  };
}

// ---- A small filesystem that fills up

function isMountPoint(dir: string): boolean {
  const target = path.resolve(dir);
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === target);
}

async function unmount(dir: string): Promise<void> {
  if (!isMountPoint(dir)) return;
  // Lazily when busy (a process still has the database open): detached now, gone once they close it.
  const plain = await execa('umount', [dir], { reject: false });
  if (plain.exitCode !== 0) await execa('umount', ['-l', dir]);
  if (isMountPoint(dir)) throw new Error(`${dir} is still mounted`);
}

/**
 * Tmpfs mounts of the file's tests, unmounted after each test. Call after useProcessGuard(): vitest
 * runs afterEach hooks last-registered first and skips the rest once one throws (the guard does when a
 * test fails halfway), so this one must come first; the processes still in there are the guard's.
 */
export function useTmpfs(): { mount: (dir: string, size: string) => Promise<void> } {
  const mounted: string[] = [];
  afterEach(async () => {
    for (const dir of mounted.splice(0)) await unmount(dir);
  });
  return {
    async mount(dir, size) {
      mkdirSync(dir, { recursive: true });
      await execa('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
      mounted.push(dir);
    },
  };
}

/** Append to `file` until its filesystem has no byte left (ENOSPC); returns the bytes written. Again later tops it up. */
export function fillUp(file: string): number {
  const fd = openSync(file, 'a');
  let written = 0;
  try {
    for (const size of [1 << 20, 1 << 12, 1 << 9]) {
      const chunk = Buffer.alloc(size, 0x2a);
      for (;;) {
        try {
          written += writeSync(fd, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}
