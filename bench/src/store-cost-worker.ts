/**
 * Section 18's measurement, one per process:
 * `node bench/dist/store-cost-worker.js <way> <file> <jobs> <per-tx>`
 * fills a fresh SQLite file, then drains it in this process and prints
 * `{ "cpu_us_per_job": N, "jobs": N }`: the CPU of the drain alone.
 *   raw-minimal:   the raw loop with its bookkeeping on section 3b's schema;
 *   raw-leasehold: the same loop on leasehold's schema (its operator indexes);
 *   store:         SqliteStore's hot path, as a child calls it: a batch's
 *                  successes with their claim records and the next claim, one
 *                  transaction.
 */
import { systemClock } from '../../dist/src/clock.js';
import { Queue } from '../../dist/src/queue/queue.js';
import { SqliteStore } from '../../dist/src/store/sqlite/store.js';
import type { Settlement, WorkerStore } from '../../dist/src/store/types.js';
import { FILL_CHUNK } from './leasehold.js';
import { fillSqlite } from './raw.js';
import { drainRaw, sqliteQueue } from './raw-queue.js';
import { benchClaim, claim } from './store-ops.js';
import { STORE_COST_WAYS, type StoreCostWay } from './store-cost.js';

const CLASS = 'bench';
const LEASE_MS = 30_000;

const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

async function fillLeasehold(file: string, jobs: number): Promise<void> {
  const queue = new Queue(await SqliteStore.open({ path: file, clock: systemClock }), { actor: 'bench' });
  for (let done = 0; done < jobs; done += FILL_CHUNK) {
    const size = Math.min(FILL_CHUNK, jobs - done);
    await queue.enqueueMany(Array.from({ length: size }, (_, i) => ({ class: CLASS, payload: { n: done + i } })));
  }
  await queue.close();
}

/** What a child settles for a no-op job: its start stamped with the outcome, its cost, its claim record. */
async function drainStore(store: WorkerStore, perTx: number): Promise<number> {
  const request = benchClaim({ classes: [CLASS], ownerId: `store-${process.pid}`, limit: perTx, leaseMs: LEASE_MS });
  let jobs = await claim(store, request);
  let done = 0;
  while (jobs.length > 0) {
    const settlements: Settlement[] = jobs.map((job) => {
      JSON.parse(job.payload); // as the raw loop does
      return {
        id: job.id,
        leaseToken: job.leaseToken,
        startedAt: Date.now(),
        verdict: { type: 'complete', result: null },
        cost: { cpuMs: 0.01, peakRssBytes: 50_000_000 },
        claim: job,
      };
    });
    const { settled, claimed } = await store.jobsSettle({ settlements, claim: request });
    if (settled.some((s) => !s.held)) throw new Error('lease lost');
    done += jobs.length;
    jobs = claimed;
  }
  return done;
}

async function measure(
  way: StoreCostWay,
  file: string,
  jobs: number,
  perTx: number,
): Promise<{ cpu_us_per_job: number; jobs: number }> {
  if (way === 'raw-minimal') fillSqlite(file, jobs, Date.now(), true);
  else await fillLeasehold(file, jobs);
  const store = way === 'store' ? await SqliteStore.open({ path: file, clock: systemClock }) : undefined;
  const queue = way === 'store' ? undefined : sqliteQueue(file, perTx, true);
  const started = cpuMicros();
  const done = store !== undefined ? await drainStore(store, perTx) : await drainRaw(queue!);
  const cpu = cpuMicros() - started;
  await store?.close();
  await queue?.close();
  if (done !== jobs) throw new Error(`${way}: drained ${done} of ${jobs}`);
  return { cpu_us_per_job: cpu / done, jobs: done };
}

const [way, file, jobsText, perTxText] = process.argv.slice(2);
if (
  !(STORE_COST_WAYS as readonly string[]).includes(way ?? '') ||
  file === undefined ||
  !(Number(jobsText) > 0) ||
  !(Number(perTxText) > 0)
) {
  process.stderr.write(`usage: store-cost-worker <${STORE_COST_WAYS.join('|')}> <file> <jobs> <per-tx>\n`);
  process.exit(2);
}
process.stdout.write(
  `${JSON.stringify(await measure(way as StoreCostWay, file, Number(jobsText), Number(perTxText)))}\n`,
);
