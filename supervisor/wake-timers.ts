import type { RecoveredJob } from '../src/store/types.js';

/**
 * Jobs of a class came back to the queue (taken back from a dead child, or
 * another host's): its idle children are woken when each is due, instead of
 * at their next poll.
 */
export class WakeTimers {
  private readonly timers = new Set<NodeJS.Timeout>();

  /** Call `wake` at each distinct time the QUEUED jobs among `jobs` are due (now, for one due already). */
  wakeFor(jobs: readonly RecoveredJob[], now: number, wake: () => void): void {
    for (const runAt of new Set(jobs.filter((job) => job.status === 'QUEUED').map((job) => job.runAt ?? now))) {
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          wake();
        },
        Math.max(0, runAt - now),
      );
      this.timers.add(timer);
    }
  }

  clear(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
