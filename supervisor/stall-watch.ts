import type { ClassConfig } from '../src/config/schema.js';
import type { LoopPhase, LoopRecord } from '../src/ipc/flight-record.js';
import type { Logger } from '../src/log.js';
import { unlessDbFault } from '../src/store/faults.js';
import type { SupervisorStore } from '../src/store/types.js';
import { Every } from './every.js';
import type { PoolChild, WatchedChild } from './supervised-child.js';

/** The phases a healthy run loop leaves by itself within bounds; `busy` waits on handlers, which max_runtime bounds. */
const WAITING: ReadonlySet<LoopPhase> = new Set(['claim-queued', 'claiming', 'idle']);
/** A loop is stalled after this many poll intervals in one waiting phase (an idle wait lasts 1.5 at most)... */
export const STALLED_POLLS = 5;
/** ...and never before this many leases. */
export const STALLED_LEASES = 2;

/**
 * How long a run loop may stay in one waiting phase: STALLED_POLLS poll
 * intervals, and never less than STALLED_LEASES leases. A claim waiting a
 * whole lease is already of no use (the heartbeats of the jobs it holds wait
 * in the same line, so their leases have run out); the second lease leaves
 * room for a claim that waits out a brief fault (a reconnect, another
 * process's write lock) without the child having reported an outage yet.
 */
export function stallAfterMs(config: Pick<ClassConfig, 'poll_seconds' | 'lease_seconds'>): number {
  return Math.max(STALLED_POLLS * config.poll_seconds, STALLED_LEASES * config.lease_seconds) * 1000;
}

/** A child as the stall watch sees it: what the health watch sees, where its run loop is, and the kill. */
export type StallWatchedChild = Pick<
  WatchedChild,
  'pid' | 'workerId' | 'config' | 'state' | 'alive' | 'killed' | 'dbOutage' | 'unansweredForMs'
> &
  Pick<PoolChild, 'forceKill'> & {
    /** Where its run loop is, as its flight recorder says (undefined before the loop first wrote). */
    readonly runLoop: LoopRecord | undefined;
  };

export interface StallWatchOptions {
  /** Which classes have due jobs: read only when a child looks stalled. */
  store: Pick<SupervisorStore, 'statsOldestDue' | 'clock'>;
  logger: Logger;
  pools: readonly { readonly children: readonly StallWatchedChild[] }[];
  tickMs: number;
}

/**
 * The safety net under every cause of a stuck run loop, known or not (a
 * promise that never settles: a query on a connection that died without an
 * error, say). A child is stalled when its event loop answers pings but its
 * run loop has stayed in one waiting phase (its flight recorder's loop
 * record) past stallAfterMs, watched all along, while its class has due
 * jobs. It is logged (CHILD_STALLED) and killed at once (SIGKILL): its jobs
 * go back without spending a retry, and its slot is refilled.
 *
 * Busy slots, a pause, a rate limit, jobs not yet due or waiting on their
 * parents, and jobs taken by other hosts all leave the loop cycling (a claim
 * that finds nothing, then an idle wait), so none of them is a stall. A
 * silent child is the health watch's (unresponsive), a child in a database
 * outage is waiting out weather, and a supervisor that cannot read the
 * queue judges nobody.
 */
export class StallWatch {
  private readonly schedule: Every;
  private lastCheck = 0;
  /** Per child: the loop record's phase start we are watching, and since when we have watched it without a gap. */
  private readonly watched = new WeakMap<StallWatchedChild, { since: number; from: number }>();

  constructor(private readonly options: StallWatchOptions) {
    const onError = unlessDbFault((error) =>
      options.logger.warn('could not check for stalled children', { err: error }),
    );
    this.schedule = new Every(options.tickMs, () => this.check(), onError);
  }

  start(): void {
    this.lastCheck = this.options.store.clock.now();
    this.schedule.start();
  }

  /** Safe twice, or before start. */
  async stop(): Promise<void> {
    await this.schedule.stop();
  }

  private async check(): Promise<void> {
    const now = this.options.store.clock.now();
    // Our own turn came late (this process or the machine was stalled): what we saw says nothing of the gap.
    const late = now - this.lastCheck > 2 * this.options.tickMs;
    this.lastCheck = now;
    const suspects: { child: StallWatchedChild; loop: LoopRecord }[] = [];
    for (const pool of this.options.pools)
      for (const child of pool.children) {
        const loop = this.stuckLoop(child, now, late);
        if (loop !== undefined) suspects.push({ child, loop });
      }
    if (suspects.length === 0) return;
    const due = new Map((await this.options.store.statsOldestDue({ now })).map((row) => [row.class, row.run_at]));
    for (const { child, loop } of suspects) {
      const oldestDue = due.get(child.config.name);
      if (oldestDue !== undefined && child.alive && child.killed === undefined) this.replace(child, loop, oldestDue);
    }
  }

  /** The child's loop record, when it has stayed in one waiting phase past its bound while we watched it answer. */
  private stuckLoop(child: StallWatchedChild, now: number, late: boolean): LoopRecord | undefined {
    const loop = child.runLoop;
    const judged =
      !late &&
      loop !== undefined &&
      WAITING.has(loop.phase) &&
      child.killed === undefined &&
      (child.state === 'ready' || child.state === 'busy') &&
      child.dbOutage === undefined &&
      child.unansweredForMs() <= this.options.tickMs;
    if (!judged) {
      this.watched.delete(child);
      return undefined;
    }
    let seen = this.watched.get(child);
    if (seen?.since !== loop.since) {
      seen = { since: loop.since, from: now };
      this.watched.set(child, seen);
    }
    const bound = stallAfterMs(child.config);
    return now - loop.since > bound && now - seen.from >= bound ? loop : undefined;
  }

  private replace(child: StallWatchedChild, loop: LoopRecord, oldestDue: number): void {
    const now = this.options.store.clock.now();
    const waitingMs = now - loop.since;
    const lastClaim = loop.lastClaimAt === null ? 'none yet' : `${((now - loop.lastClaimAt) / 1000).toFixed(1)}s ago`;
    const detail = `its run loop has been ${loop.phase} for ${(waitingMs / 1000).toFixed(1)}s (last claim: ${lastClaim}) while its class has due jobs`;
    this.options.logger.warn(`child stalled: ${detail}; replacing it`, {
      event: 'CHILD_STALLED',
      class: child.config.name,
      pid: child.pid,
      worker_id: child.workerId,
      waiting_on: loop.phase,
      waiting_ms: waitingMs,
      last_claim_at: loop.lastClaimAt,
      oldest_age_seconds: Math.max(0, Math.round((now - oldestDue) / 1000)),
    });
    child.forceKill('stalled', 'LEASE:RELEASED', detail);
  }
}
