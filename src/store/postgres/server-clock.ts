import type pg from 'pg';
import { AnchoredClock, monotonicMs, type Anchor, type Clock } from '../../clock.js';
import { first } from './connection.js';
import { STATS_SQL } from './sql/stats.js';

/** Round trips an anchoring makes, keeping the shortest: the first may include opening a connection. */
const SAMPLES = 3;
/** How often the anchor is measured again, bounding the drift of this host's monotonic clock from the server's. */
const REANCHOR_MS = 60_000;

/**
 * The server's clock, read once and then kept on this host's monotonic
 * clock, as guarantee 11 (Time is the database's) says: every time a PostgreSQL
 * store writes or compares (claims, heartbeats, the sweeper, run_at,
 * backoff) is the server's, without a round trip per statement, and this
 * host's wall clock, skewed or stepped, plays no part. Its error is half the
 * shortest round trip plus the monotonic clock's drift over REANCHOR_MS;
 * the lease's slack (lease_seconds - heartbeat_seconds) absorbs it. A new
 * anchor is measured in the background; a failed one keeps the last.
 */
export class ServerClock implements Clock {
  private readonly timer: NodeJS.Timeout;
  private measuring = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly clock: AnchoredClock,
  ) {
    this.timer = setInterval(() => void this.reanchor(), REANCHOR_MS);
    this.timer.unref();
  }

  /** Anchor on the server now: throws when it does not answer, as opening the store would. */
  static async open(pool: pg.Pool): Promise<ServerClock> {
    return new ServerClock(pool, new AnchoredClock(await measureAnchor(pool)));
  }

  now(): number {
    return this.clock.now();
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async reanchor(): Promise<void> {
    if (this.measuring) return;
    this.measuring = true;
    try {
      this.clock.reanchor(await measureAnchor(this.pool));
    } catch {
      // The database is away: the last anchor stands, and the statements that fail say so.
    } finally {
      this.measuring = false;
    }
  }
}

/** The server's time at the midpoint of the shortest of SAMPLES round trips. */
async function measureAnchor(pool: pg.Pool): Promise<Anchor> {
  let best: (Anchor & { roundTripMs: number }) | undefined;
  for (let sample = 0; sample < SAMPLES; sample++) {
    const before = monotonicMs();
    const row = await first<{ now: number }>(pool, STATS_SQL.serverNow);
    const after = monotonicMs();
    if (row === undefined) throw new Error('the server did not say its time');
    const measured = { wallMs: row.now, monotonicMs: (before + after) / 2, roundTripMs: after - before };
    if (best === undefined || measured.roundTripMs < best.roundTripMs) best = measured;
  }
  return best!;
}
