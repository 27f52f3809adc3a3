/**
 * Section 24's idle hosts (issue 53): what a host costs the PostgreSQL
 * server while its queue is empty. K supervisors (each a host of its own,
 * with one child) start on a new schema; once every child is ready and
 * a few seconds more have passed, the server's CPU, its committed transactions and its WAL are read over a
 * window. Every host's supervisor heartbeats, rolls up and looks for
 * unserved classes, and its child polls: the floor each added host puts
 * under every job, and what a DBA sees of a queue doing nothing.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { clockTicksPerSecond, serverCpuTicks, waitFor } from './common.js';
import type { BenchContext } from './context.js';
import { benchDatabase } from './database.js';
import { SupervisorRun, writeConfig, writeNoopHandler } from './leasehold.js';

/** From the last child's start, for the hosts' start-up to be over (their first roll-up, sweep and checks). */
const SETTLE_MS = 3_000;
const READY_TIMEOUT_MS = 60_000;
const WINDOW_MS = 8_000;

/** One window of K idle hosts: per second, for the whole server, and the connections they hold. */
export interface IdleHostsRun {
  serverCpuMsPerSec: number;
  transactionsPerSec: number;
  walBytesPerSec: number;
  connections: number;
}

/** `supervise`: the build to run (this one's by default; LEASEHOLD_BENCH_BASELINE's beside it). */
export async function idleHosts(ctx: BenchContext, hosts: number, supervise?: string): Promise<IdleHostsRun> {
  const dir = ctx.dirs.make(`idle-h${hosts}`);
  const database = benchDatabase(ctx, dir, 'postgres');
  const handler = writeNoopHandler(dir);
  const supervisors = Array.from({ length: hosts }, (_, i) => {
    const hostDir = ctx.dirs.make(`idle-h${hosts}-host${i + 1}`);
    const config = writeConfig(hostDir, { database: database.url, handler, processes: 1 });
    return SupervisorRun.start(ctx.processes, config, hostDir, supervise, { LEASEHOLD_HOST: `bench-idle-${i + 1}` });
  });
  try {
    await waitFor(
      "every idle host's child to be ready",
      () => supervisors.every((s) => s.log('CHILD_READY').length >= 1) || undefined,
      { intervalMs: 100, timeoutMs: READY_TIMEOUT_MS },
    );
    await sleep(SETTLE_MS);
    const counter = await database.counter();
    try {
      const commits = counter.count('SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()');
      const wal = counter.count("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint");
      const connections = counter.count(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'leasehold'",
      );
      const read = async () => ({
        commits: await commits(),
        wal: await wal(),
        connections: await connections(),
        ticks: serverCpuTicks(),
      });
      const before = await read();
      await sleep(WINDOW_MS);
      const after = await read();
      const perSec = (delta: number) => delta / (WINDOW_MS / 1000);
      return {
        serverCpuMsPerSec: perSec(((after.ticks - before.ticks) * 1000) / clockTicksPerSecond()),
        // The first read's last two statements are the counter's, not the queue's (each backend reports its
        // commits within a second: a window of several seconds is counted to about a second's worth).
        transactionsPerSec: perSec(after.commits - before.commits - 2),
        walBytesPerSec: perSec(after.wal - before.wal),
        connections: after.connections,
      };
    } finally {
      await counter.close();
    }
  } finally {
    await Promise.all(supervisors.map((s) => s.stop()));
    await database.dispose();
  }
}
