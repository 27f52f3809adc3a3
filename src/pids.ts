import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Whether a pid is a live process. A zombie (dead, not yet reaped by its
 * parent or by init) answers kill(pid, 0) like a live one, so on Linux the
 * state in /proc decides.
 */
export function isPidAlive(pid: number): boolean {
  // 0 and negative numbers name process groups to kill(): never a single live process here.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const state = processState(pid);
  return state !== 'Z' && state !== 'X';
}

/** The one-letter state from /proc/<pid>/stat (R, S, D, T, Z, ...), or undefined where there is no /proc. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) S ...": comm may contain spaces and parentheses, the state follows the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/**
 * Remove what `dir` holds named `<prefix><pid>-...` for a pid that is gone
 * (`alive` says whether one runs): what a process names after itself, and
 * cannot remove once SIGKILLed. Another user's entry is theirs to remove.
 */
export function removeNamedAfterDeadPids(dir: string, prefix: string, alive: (pid: number) => boolean): void {
  for (const name of readdirSync(dir)) {
    const pid = name.startsWith(prefix) ? /^(\d+)-/.exec(name.slice(prefix.length))?.[1] : undefined;
    if (pid === undefined || alive(Number(pid))) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
    } catch {
      // not ours to remove
    }
  }
}
