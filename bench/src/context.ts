/** What the orchestrator hands every section: sizes, the process registry, temp folders, a progress line. */
import type { TempDirs } from './common.js';
import type { ProcessRegistry } from './processes.js';

/** The full run's sizes; their type is every run's. */
export const FULL = {
  /** Repetitions of every figure (median, min, max over them). */
  runs: 3,
  /** Jobs per drain in sections 1-3. */
  jobs: 20_000,
  processes: [1, 2, 4],
  plainjobProcesses: [1, 2],
  rawProcesses: [1, 2],
  rawPerTx: [1, 10],
  drainTimeoutMs: 600_000,
  enqueueCliSingle: 50,
  enqueueLibrarySingle: 5_000,
  enqueueBulk: 20_000,
  /**
   * Section 4b (issue 41): per run and arm, `single` enqueues or `batches` enqueueMany of `batch`, the two arms
   * of a pair taking turns in `blocks` blocks.
   */
  enqueueTx: { single: 10_000, batches: 20, batch: 1_000, runs: 3, blocks: 10 },
  /** Section 19 (issue 42): queue.waitFor calls attached to a drain of `jobs`, beside one events consumer. */
  waiters: 100,
  latencyJobs: 1_000,
  latencyGapMs: [5, 30] as [number, number],
  idleWindowSeconds: 20,
  recoveryKills: 20,
  recoverySleepMs: 2_000,
  depths: [1_000, 100_000, 1_000_000],
  /** Jobs claimed and completed per depth measurement. */
  depthMeasured: 2_000,
  sweepHeld: 100_000,
  sweepExpiredShare: 0.01,
  crashKills: 3,
  /** `jobs` in id order, each `fastMs` long but every `slowEvery`-th (1-based), which is `slowMs` long. */
  headOfLine: { jobs: 2_000, fastMs: 1, slowEvery: 250, slowMs: 3_000 },
  /**
   * One child at each of `levels`, no-op jobs (`jobs` of them, as section 1)
   * and `sleepJobs[i]` jobs of `sleepMs` at `levels[i]` (a slot runs at most
   * 1000 / sleepMs jobs a second).
   */
  concurrency: { levels: [1, 8, 32], sleepMs: 10, sleepJobs: [200, 800, 1_600] },
  /**
   * Section 17's drains, each about 15 s: jobs that await 5 ms at concurrency
   * 1 (about 180 a second) and at 20, and jobs that burn 0.5 ms of CPU.
   */
  realWork: { awaitJobs: 2_500, wideJobs: 40_000, burnJobs: 25_000 },
  /** Jobs in the store whose operator reads are timed (sections 13 and 15). */
  readsJobs: 1_000_000,
  /** Jobs finished in the last hour whose windowed reads section 13 times as well: an hour at 100 jobs/s (issue 32). */
  liveHourJobs: 360_000,
  /** Exited children in the registry whose dashboard pages are timed (section 15). */
  dashboardWorkerHistory: 2_000,
  /** Runs of each `leasehold` command timed (section 14). */
  cliRuns: 20,
  /** Section 20: no-op jobs in the burst through supervise, and the rounds of reads right after it (issue 43). */
  burstJobs: 300_000,
  burstRounds: 6,
  /** Section 20b: the same on PostgreSQL, after a burst of this many (issue 53). */
  pgBurstJobs: 100_000,
  /** Section 16: heartbeat samples while a job runs, jobs killed at max_runtime, occurrences of a per-second schedule. */
  timeliness: { samples: 10, kills: 3, occurrences: 10 },
};

export type Sizes = typeof FULL;

/** `--quick`: tiny sizes, one run each; a smoke test of every section, not a measurement. */
export const QUICK: Sizes = {
  ...FULL,
  runs: 1,
  jobs: 300,
  drainTimeoutMs: 120_000,
  enqueueCliSingle: 3,
  enqueueLibrarySingle: 100,
  enqueueBulk: 1_000,
  enqueueTx: { single: 200, batches: 2, batch: 100, runs: 1, blocks: 2 },
  waiters: 10,
  latencyJobs: 50,
  idleWindowSeconds: 3,
  recoveryKills: 3,
  depths: [1_000, 3_000, 10_000],
  depthMeasured: 200,
  sweepHeld: 2_000,
  crashKills: 1,
  headOfLine: { jobs: 200, fastMs: 1, slowEvery: 50, slowMs: 500 },
  concurrency: { levels: [1, 8, 32], sleepMs: 10, sleepJobs: [20, 40, 80] },
  realWork: { awaitJobs: 40, wideJobs: 400, burnJobs: 300 },
  readsJobs: 3_000,
  liveHourJobs: 3_000,
  dashboardWorkerHistory: 100,
  cliRuns: 10,
  burstJobs: 3_000,
  burstRounds: 3,
  pgBurstJobs: 3_000,
  timeliness: { samples: 4, kills: 2, occurrences: 3 },
};

export interface BenchContext {
  sizes: Sizes;
  quick: boolean;
  /** claim_batch of the "throughput default" leasehold runs (the other runs use 1). */
  claimBatch: number;
  processes: ProcessRegistry;
  dirs: TempDirs;
  /** The PostgreSQL server of the pg-* sections (each measurement makes a schema of its own there). */
  pgUrl: string;
  /** `--keep`: leave temp folders and PostgreSQL schemas for a look afterwards. */
  keep: boolean;
  /** A progress line on stderr. */
  progress(message: string): void;
}
