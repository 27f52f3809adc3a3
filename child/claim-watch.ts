import type { ClaimedJob } from '../src/store/types.js';
import type { WakeWatch } from '../src/store/wake-watch.js';

/**
 * When a claim arms the store's wake-up watch (on SQLite, a watch of the
 * WAL that ends at the first commit it sees). Armed before a claim only
 * while the claims find nothing: a claim that follows one that found jobs
 * goes unwatched, and if it finds nothing the watch is armed and the claim
 * made once more before the loop waits. Armed before every claim, a busy
 * child watched the file all along, and each of the writer's page writes
 * was an event for it, in every child (inotify's cost falls on the writer).
 */
export class ClaimWatch {
  private watch: Pick<WakeWatch, 'rearm'> | undefined;
  private foundNothing = true;

  use(watch: Pick<WakeWatch, 'rearm'>): void {
    this.watch = watch;
  }

  /**
   * `take`'s jobs, and when the claim that brought them was asked for (a
   * rate limit's start margin runs from it); a commit after the last claim
   * that found nothing wakes the wait that follows.
   */
  async claim(take: () => Promise<ClaimedJob[]>): Promise<{ claimed: ClaimedJob[]; askedAt: number }> {
    const watch = this.watch;
    const armed = watch !== undefined && this.foundNothing;
    // Before the claim reads: a commit after it wakes an idle wait, one before is in what the claim finds.
    if (armed) watch.rearm();
    let askedAt = Date.now();
    let claimed = await take();
    if (claimed.length === 0 && watch !== undefined && !armed) {
      watch.rearm();
      askedAt = Date.now();
      claimed = await take();
    }
    this.foundNothing = claimed.length === 0;
    return { claimed, askedAt };
  }
}
