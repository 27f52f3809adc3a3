import { readFileSync } from 'node:fs';

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
