/** The machine a benchmark ran on, and how busy it was when it began. */
import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { availableParallelism, loadavg, platform, release } from 'node:os';
import { machineBusyPercent, round } from './common.js';

export interface MachineInfo {
  nproc: number;
  cpu_model: string;
  mem_total_mb: number;
  os: string;
  node: string;
  sqlite: string;
  better_sqlite3: string;
  /** 1, 5 and 15 minute load averages when the benchmark began. */
  loadavg_start: number[];
  /** Share of all cores busy (other programs) over 2 s before the first section. */
  cpu_busy_percent_before: number;
}

function cpuModel(): string {
  try {
    return /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function memTotalMb(): number {
  try {
    const kb = Number(/^MemTotal:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]);
    return Math.round(kb / 1024);
  } catch {
    return Number.NaN;
  }
}

/**
 * The installed version of a package, found where Node looks for it from here: the bench's own
 * node_modules, then the root's (the bench's peers are hoisted there, the product's dependencies are there).
 * Read from the file, for a package's `exports` may hide its package.json from `require.resolve`.
 */
function packageVersion(name: string): string {
  for (const dir of createRequire(import.meta.url).resolve.paths(name) ?? []) {
    try {
      return (JSON.parse(readFileSync(join(dir, name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      // not installed in this folder
    }
  }
  return 'unknown';
}

/** The source measured: the commit, and whether the working tree differed from it (dist/ is built from the tree). */
export function sourceInfo(): { commit: string; dirty_files: number } {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--', 'src', 'supervisor', 'child'], {
      cwd: root,
      encoding: 'utf8',
    });
    return { commit, dirty_files: status.split('\n').filter((line) => line.trim() !== '').length };
  } catch {
    return { commit: 'unknown', dirty_files: -1 };
  }
}

export function loadAverages(): number[] {
  return loadavg().map((v) => round(v, 2));
}

export async function machineInfo(): Promise<MachineInfo> {
  const loadavgStart = loadAverages();
  const db = new Database(':memory:');
  const sqlite = String(db.prepare('SELECT sqlite_version()').pluck().get());
  db.close();
  return {
    nproc: availableParallelism(),
    cpu_model: cpuModel(),
    mem_total_mb: memTotalMb(),
    os: `${platform()} ${release()}`,
    node: process.version,
    sqlite,
    better_sqlite3: packageVersion('better-sqlite3'),
    loadavg_start: loadavgStart,
    cpu_busy_percent_before: await machineBusyPercent(2_000),
  };
}

export { packageVersion };
