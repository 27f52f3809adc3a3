/**
 * Each running supervisor's record on its own host, a small JSON file in the
 * system's temp folder: the config file it runs, the database it runs on,
 * and the verdict of its last reload. `leasehold reload` reads it to tell
 * "the config now names another database" from "no supervisor runs", and to
 * wait for the verdict of the reload it asked for. The database cannot say
 * either: the first needs the database the supervisor *was* started with,
 * the second an answer on the host that sent the signal.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isPidAlive } from './pids.js';

export type ReloadEvent = 'CONFIG_RELOADED' | 'CONFIG_RELOAD_REJECTED' | 'CONFIG_RELOAD_FAILED';

export interface ReloadVerdict {
  /** 1 for the first reload of this supervisor, then one more for each. */
  seq: number;
  event: ReloadEvent;
  /** The log line's message: what changed, or why nothing did. */
  message: string;
  at: number;
}

export interface LocalSupervisor {
  pid: number;
  supervisorId: string;
  /** Absolute path of the config file it was started with. */
  configFile: string;
  database: string;
  lastReload: ReloadVerdict | null;
}

function folder(): string {
  return path.join(tmpdir(), 'leasehold-supervisors');
}

function fileOf(pid: number): string {
  return path.join(folder(), `${pid}.json`);
}

/** Written whole to a temporary name, then renamed: a reader never sees half a record. */
export function writeLocalSupervisor(record: LocalSupervisor): void {
  mkdirSync(folder(), { recursive: true });
  const temporary = `${fileOf(record.pid)}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(record));
  renameSync(temporary, fileOf(record.pid));
}

export function removeLocalSupervisor(pid: number): void {
  rmSync(fileOf(pid), { force: true });
}

/** The records of live supervisors started with `configFile` (an absolute path); a dead pid's record is stale and skipped. */
export function localSupervisorsOf(configFile: string): LocalSupervisor[] {
  let names: string[];
  try {
    names = readdirSync(folder()).filter((name) => /^\d+\.json$/.test(name));
  } catch {
    return []; // no supervisor has run on this host yet
  }
  return names
    .map((name) => readRecord(path.join(folder(), name)))
    .filter(
      (record): record is LocalSupervisor =>
        record !== undefined && record.configFile === configFile && isPidAlive(record.pid),
    );
}

/** The live record of supervisor `pid`, if it still runs. */
export function localSupervisor(pid: number): LocalSupervisor | undefined {
  const record = readRecord(fileOf(pid));
  return record !== undefined && isPidAlive(pid) ? record : undefined;
}

function readRecord(file: string): LocalSupervisor | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LocalSupervisor;
  } catch {
    return undefined; // removed meanwhile
  }
}
