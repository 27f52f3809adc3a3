/**
 * Section 18: the store's own CPU per no-op job on SQLite, in one process,
 * without children or IPC (store-cost-worker.ts), against the raw loop with
 * the same bookkeeping rows, on section 3b's schema and on leasehold's. The
 * ways take turns within each round, each in a fresh process and file.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';

export const STORE_COST_WAYS = ['raw-minimal', 'raw-leasehold', 'store'] as const;
export type StoreCostWay = (typeof STORE_COST_WAYS)[number];
export const STORE_COST_LABELS: Record<StoreCostWay, string> = {
  'raw-minimal': "the raw loop (section 3b's schema: jobs with 2 indexes)",
  'raw-leasehold': "the raw loop on leasehold's schema (jobs with 7 indexes)",
  store: 'SqliteStore.jobsSettle, as a child calls it',
};

const WORKER = fileURLToPath(new URL('./store-cost-worker.js', import.meta.url));
/** Jobs a transaction, as a child's claim_batch default with one slot. */
export const STORE_COST_PER_TX = 64;
/**
 * The store's own CPU per job within this of the raw loop's (section 3b's schema): what the store adds to the
 * same rows (fencing, the outcome plan, its indexes) may cost at most half again what writing them costs.
 */
export const STORE_COST_TARGET = 1.5;

export interface StoreCostSection {
  jobs: number;
  per_tx: number;
  /** CPU µs per job of each way's drain. */
  cpu_us_per_job: Record<StoreCostWay, Stat>;
  /** Within each round: the store over the raw loop on 3b's schema, and the raw loop on leasehold's schema over it. */
  store_over_raw: Stat;
  leasehold_schema_over_raw: Stat;
}

function measure(way: StoreCostWay, file: string, jobs: number): number {
  const result = spawnSync(process.execPath, [WORKER, way, file, String(jobs), String(STORE_COST_PER_TX)], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  if (result.status !== 0)
    throw new Error(`store-cost-worker ${way} exited ${String(result.status ?? result.signal)}: ${result.stderr}`);
  return (JSON.parse(result.stdout) as { cpu_us_per_job: number }).cpu_us_per_job;
}

export function runStoreCost(ctx: BenchContext): StoreCostSection {
  const jobs = ctx.sizes.jobs;
  const cpu: Record<StoreCostWay, number[]> = { 'raw-minimal': [], 'raw-leasehold': [], store: [] };
  for (let round = 0; round < ctx.sizes.runs; round++) {
    ctx.progress(`store-cost: round ${round + 1} of ${ctx.sizes.runs}, ${jobs} jobs a way`);
    for (const way of STORE_COST_WAYS)
      cpu[way].push(measure(way, join(ctx.dirs.make(`store-cost-${way}-${round}`), 'queue.db'), jobs));
  }
  const ratio = (a: number[], b: number[]) =>
    summarize(
      a.map((value, i) => value / b[i]!),
      2,
    );
  return {
    jobs,
    per_tx: STORE_COST_PER_TX,
    cpu_us_per_job: {
      'raw-minimal': summarize(cpu['raw-minimal'], 1),
      'raw-leasehold': summarize(cpu['raw-leasehold'], 1),
      store: summarize(cpu.store, 1),
    },
    store_over_raw: ratio(cpu.store, cpu['raw-minimal']),
    leasehold_schema_over_raw: ratio(cpu['raw-leasehold'], cpu['raw-minimal']),
  };
}
