/**
 * Real-process bookkeeping for the supervisor suites: is a pid alive, wait for
 * it to go, and a per-file guard that fails a test which leaves any process
 * behind (a supervisor, a child read from the workers table or the log, a
 * grandchild read from a pid file), then kills the leftovers so the suite
 * leaves nothing running.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach } from 'vitest';
import { isPostgresUrl } from '../../src/store/database-url.js';
import { openStore } from '../../src/store/open.js';
import { isPidAlive as isAlive } from '../../src/pids.js';
import { readJsonLog } from './json-log.js';
import { waitFor } from './wait.js';

/** True while the pid names a running process; a zombie (exited, not yet reaped) counts as gone. */
export { isAlive };

/** The process group of a pid, or undefined when it is gone. */
export function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]);
  } catch {
    return undefined;
  }
}

/** Live processes (zombies aside) whose process group is `pgid`. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    if (processGroupOf(pid) === pgid && isAlive(pid)) members.push(pid);
  }
  return members;
}

/** Wait until the pid is gone; true if it went within the deadline. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  try {
    await waitFor(`pid ${pid} to exit`, () => !isAlive(pid), { timeoutMs, intervalMs: 20 });
    return true;
  } catch {
    return false;
  }
}

/**
 * Wait until the pid is not even a zombie any more (reaped: no /proc entry).
 * In some containers an orphan stays a zombie for a second or so before
 * init reaps it, and `kill(pid, 0)` still succeeds on it meanwhile.
 */
export async function waitForReaped(pid: number, timeoutMs: number): Promise<boolean> {
  try {
    await waitFor(`pid ${pid} to be reaped`, () => !existsSync(`/proc/${pid}`), { timeoutMs, intervalMs: 20 });
    return true;
  } catch {
    return false;
  }
}

/** Pids listed one a line in a file (the grandchild fixture writes its grandchild's pid so). */
export function readPidFile(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/** The pids of CHILD_SPAWNED lines in a supervisor's JSON log file. */
export function spawnedPidsInLog(file: string): number[] {
  return readJsonLog<{ event?: unknown; pid?: unknown }>(file)
    .filter((record) => record.event === 'CHILD_SPAWNED')
    .map((record) => record.pid)
    .filter((pid): pid is number => typeof pid === 'number');
}

interface Tracked {
  pid: number;
  label: string;
  /** Our own direct subprocess: never signal its group (it shares ours). */
  ownGroup: boolean;
}

const tracked: Tracked[] = [];
const pidFiles: { file: string; label: string }[] = [];
const databases: string[] = [];
const logFiles: string[] = [];
const cleanups: (() => Promise<void> | void)[] = [];

/** A process the test started itself (the supervisor): it shares the test runner's process group. */
export function trackProcess(pid: number, label: string): void {
  tracked.push({ pid, label, ownGroup: true });
}

/** A file of pids (one a line) whose processes must be gone after the test. */
export function trackPidFile(file: string, label = 'grandchild'): void {
  pidFiles.push({ file, label });
}

/** `grandchild.pids` in `dir`, where the grandchild fixture writes its grandchild's pid, tracked as above. */
export function trackedPidFile(dir: string): string {
  const file = path.join(dir, 'grandchild.pids');
  trackPidFile(file);
  return file;
}

/** Every child recorded in this database's workers table (a SQLite path or a postgres:// URL) must be gone after the test. */
export function trackWorkersDatabase(database: string): void {
  if (!databases.includes(database)) databases.push(database);
}

/** Every child the supervisor logged as spawned must be gone after the test. */
export function trackLogFile(file: string): void {
  if (!logFiles.includes(file)) logFiles.push(file);
}

/** Run after the leak check (close a queue, say). */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

async function collect(): Promise<Tracked[]> {
  const all: Tracked[] = [...tracked];
  for (const { file, label } of pidFiles)
    for (const pid of readPidFile(file)) all.push({ pid, label: `${label} (${file})`, ownGroup: false });
  for (const database of databases) {
    if (!isPostgresUrl(database) && !existsSync(database)) continue;
    const store = await openStore(database);
    try {
      for (const row of await store.workerList({ includeExited: true, limit: 10_000 })) {
        if (row.kind === 'child')
          all.push({ pid: row.pid, label: `child ${row.class ?? '?'} ${row.id}`, ownGroup: false });
      }
    } finally {
      await store.close();
    }
  }
  for (const file of logFiles)
    for (const pid of spawnedPidsInLog(file)) all.push({ pid, label: `child spawned per ${file}`, ownGroup: false });
  const seen = new Set<number>();
  return all.filter((entry) => {
    if (entry.pid === process.pid || seen.has(entry.pid)) return false;
    seen.add(entry.pid);
    return true;
  });
}

function killHard(entry: Tracked, ourGroup: number | undefined): void {
  // A child is the leader of its own group: the group takes its grandchildren too.
  // Never signal our own group (the supervisor shares the test runner's).
  if (!entry.ownGroup && entry.pid !== ourGroup) {
    try {
      process.kill(-entry.pid, 'SIGKILL');
    } catch {
      // no such group
    }
  }
  try {
    process.kill(entry.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Call once at the top of a test file. After each test: every tracked
 * process must be gone (a short grace lets exits that are already under way
 * finish); the leftovers are SIGKILLed (with their process groups) and the
 * test fails, naming them.
 */
export function useProcessGuard({ graceMs = 1_000 } = {}): void {
  afterEach(async () => {
    const ourGroup = processGroupOf(process.pid);
    let leftovers: Tracked[] = [];
    try {
      const candidates = await collect();
      const ourGroupOk = (pgid: number) => pgid !== ourGroup && pgid !== process.pid;
      /** What is still running: the tracked pids, and whatever is left in the children's process groups. */
      const alive = (): Tracked[] => {
        const found = candidates.filter((c) => isAlive(c.pid));
        for (const c of candidates) {
          if (c.ownGroup || !ourGroupOk(c.pid)) continue;
          for (const pid of groupMembers(c.pid)) {
            if (!found.some((f) => f.pid === pid))
              found.push({ pid, label: `in the process group of ${c.label}`, ownGroup: false });
          }
        }
        return found;
      };
      const deadline = Date.now() + graceMs;
      await waitFor('tracked processes to exit', () => alive().length === 0 || Date.now() > deadline, {
        timeoutMs: graceMs + 1_000,
        intervalMs: 50,
      });
      leftovers = alive();
      for (const entry of leftovers) killHard(entry, ourGroup);
      for (const entry of leftovers) await waitForExit(entry.pid, 5_000);
    } finally {
      const pending = cleanups.splice(0);
      for (const fn of pending) await Promise.resolve(fn()).catch(() => undefined);
      tracked.length = 0;
      pidFiles.length = 0;
      databases.length = 0;
      logFiles.length = 0;
    }
    if (leftovers.length > 0) {
      throw new Error(
        `processes left behind after the test: ${leftovers.map((l) => `${l.pid} (${l.label})`).join(', ')}`,
      );
    }
  });
}
