import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeaseholdConfig } from '../../src/config/schema.js';

/** Jobs of 20 ms to 1.2 s: the ones that are SIGKILLed and SIGSTOPped mid-run. */
export const LONG_CLASS = 'chaos';
/** Jobs under 5 ms, several at once in each child: the batched claim and group commit under damage. */
export const SHORT_CLASS = 'chaos_short';
export const SHORT_CLASS_CONCURRENCY = 4;

/**
 * Plentiful, so that every job must end SUCCEEDED: deliberate damage aims
 * only at first attempts, and any other event costs a job at most one.
 */
export const MAX_RETRIES = 100;

/**
 * The generated config: short leases so that damage shows quickly, retries plenty (MAX_RETRIES).
 * max_runtime_seconds outlasts the longest job (1.2 s) with room for the writes it waits on.
 * The sweeper runs every 0.2 s: a stopped child's lease must be taken back (and the child resumed,
 * a zombie) before its supervisor kills it, 3 unanswered pings (3 s) after the stop; with a 0.5 s
 * sweep, loaded CI runs on PostgreSQL made 0 to 5 zombies, where the run wants 5 refused writes.
 */
export function writeChaosConfig(folder: string, options: { handler: string; concurrency: number }): string {
  const file = join(folder, 'chaos.yaml');
  const limits = `    lease_seconds: 2
    heartbeat_seconds: 1
    max_runtime_seconds: 4
    kill_grace_seconds: 0.5
    max_retries: ${MAX_RETRIES}
    backoff: { base_seconds: 0.05, max_seconds: 0.5, jitter: true }
    restart: { max_restarts: 100000, within_seconds: 60 }
    poll_seconds: 0.1`;
  writeFileSync(
    file,
    `database: ${join(folder, 'queue.db')}
log: { level: info, file: ${join(folder, 'supervisor.log')} }
sweeper: { interval_seconds: 0.2, batch_size: 100 }
shutdown_grace_seconds: 5
classes:
  - name: ${LONG_CLASS}
    handler: ${options.handler}
    processes: 4
    concurrency: ${options.concurrency}
${limits}
  - name: ${SHORT_CLASS}
    handler: ${options.handler}
    processes: 2
    concurrency: ${SHORT_CLASS_CONCURRENCY}
${limits}
`,
  );
  return file;
}

/** A config given with --config must have both chaos classes. */
export function checkChaosClasses(config: LeaseholdConfig, file: string): void {
  for (const name of [LONG_CLASS, SHORT_CLASS]) {
    if (!config.classes.some((c) => c.name === name)) throw new Error(`${file} has no class named ${name}`);
  }
}
