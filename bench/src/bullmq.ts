/**
 * The BullMQ peer beside section 1: a redis-server of its own on a free
 * port in the drain's folder (no snapshots, no append-only file), filled
 * with addBulk and drained by BullMQ's Worker (bullmq-worker.ts).
 */
import { Queue } from 'bullmq';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './common.js';
import type { BenchContext } from './context.js';
import { drainByWorkers, POLL_MS, type DrainRun } from './drain.js';
import { inChunks } from './leasehold.js';
import type { Managed } from './processes.js';

const WORKER = fileURLToPath(new URL('./bullmq-worker.js', import.meta.url));
export const BULLMQ_CONCURRENCY = 50;
export const BULLMQ_PROCESSES = 1;

/** A TCP port nobody listens on now (the kernel's pick). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port to listen on');
  return address.port;
}

/** redis-server on a free port with its files in `dir`, once it accepts connections; the caller stops it. */
async function startRedis(ctx: BenchContext, dir: string): Promise<{ server: Managed; port: number }> {
  const port = await freePort();
  const log = join(dir, 'redis.out');
  const server = ctx.processes.start(
    'redis-server',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { output: log },
  );
  try {
    await waitFor('redis-server to accept connections', () => {
      if (!server.running) throw new Error(`redis-server exited; see ${log}`);
      return existsSync(log) && readFileSync(log, 'utf8').includes('Ready to accept connections') ? true : undefined;
    });
  } catch (error) {
    await server.stop(3_000);
    throw error;
  }
  return { server, port };
}

/** `ctx.sizes.jobs` no-op jobs through BullMQ at BULLMQ_CONCURRENCY; CPU: the worker and redis-server. */
export async function bullmqDrain(ctx: BenchContext): Promise<DrainRun> {
  const jobs = ctx.sizes.jobs;
  const dir = ctx.dirs.make('bullmq');
  const redis = await startRedis(ctx, dir);
  const queue = new Queue('bench', { connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null } });
  try {
    await inChunks(jobs, (ns) => queue.addBulk(ns.map((n) => ({ name: 'noop', data: { n } }))));
    return await drainByWorkers(ctx, {
      name: 'bullmq',
      script: WORKER,
      args: [String(redis.port), String(BULLMQ_CONCURRENCY)],
      processes: BULLMQ_PROCESSES,
      jobs,
      dir,
      pollMs: POLL_MS.sqlite,
      // The queue's connection counts; it is closed below, before its server.
      counter: { close: async () => undefined },
      countDone: () => queue.getCompletedCount(),
      exitWhenEmpty: false,
      serverPids: [redis.server.pid],
    });
  } finally {
    await queue.close();
    await redis.server.stop(5_000);
  }
}
