/** The JSON document's shape: its sections, targets and errors (render.ts makes the readable table of it, targets.ts checks the targets). */
import type { ComparisonSections, PgComparisonSections } from './compare.js';
import type { CliSection } from './cli.js';
import type { ConcurrencySection } from './concurrency.js';
import type { DepthSection } from './depth.js';
import type { EnqueueSection } from './enqueue.js';
import type { EnqueueTxSection } from './enqueue-tx.js';
import type { HeadOfLineSection } from './head-of-line.js';
import type { LatencySection, PgLatencySection } from './latency.js';
import type { MachineInfo } from './machine.js';
import type { OverheadSection } from './overhead.js';
import type { RealWorkSection } from './real-work.js';
import type { WriterSection } from './writer.js';
import type { PgStatementsSection } from './pg-statements.js';
import type { HostsSection } from './hosts.js';
import type { FloorSection } from './pg-floor.js';
import type { TracingSection } from './tracing.js';
import type { StoreCostSection } from './store-cost.js';
import type { RecoverySection } from './recovery.js';
import type { ReadsSection } from './reads.js';
import type { DashboardSection } from './dashboard.js';
import type { TimelinessSection } from './timeliness.js';
import type { WaitersSection } from './waiters.js';
import type { BurstReadsSection } from './burst-reads.js';

export const SECTIONS = [
  'throughput',
  'plainjob',
  'raw',
  'bullmq',
  'enqueue',
  'enqueue-tx',
  'latency',
  'recovery',
  'depth',
  'overhead',
  'pg-throughput',
  'graphile-worker',
  'pg-latency',
  'head-of-line',
  'concurrency',
  'reads',
  'cli',
  'dashboard',
  'timeliness',
  'real-work',
  'store-cost',
  'waiters',
  'burst-reads',
  'writer',
  'tracing',
  'pg-statements',
  'pg-hosts',
  'pg-burst-reads',
  'pg-floor',
] as const;
export type SectionName = (typeof SECTIONS)[number];

/** One target: its id, what it says, the value measured (null: not measured in this run), and whether it was met. */
export interface Target {
  id: string;
  target: string;
  value: number | null;
  met: boolean | null;
}

export interface BenchReport {
  bench: 'leasehold';
  command: string;
  quick: boolean;
  started_at: string;
  duration_seconds: number;
  machine: MachineInfo & { loadavg_end: number[] };
  /** The commit measured, and how many files under src/, supervisor/ and child/ differed from it. */
  source: { commit: string; dirty_files: number };
  /** `postgres`: the server of the pg-* sections (the URL without its password), when they ran. */
  params: { runs: number; jobs: number; claim_batch: number; processes: number[]; postgres: string | null };
  sections: ComparisonSections &
    PgComparisonSections & {
      enqueue?: EnqueueSection;
      'enqueue-tx'?: EnqueueTxSection;
      latency?: LatencySection;
      recovery?: RecoverySection;
      depth?: DepthSection;
      overhead?: OverheadSection;
      'pg-latency'?: PgLatencySection;
      'head-of-line'?: HeadOfLineSection;
      concurrency?: ConcurrencySection;
      reads?: ReadsSection;
      cli?: CliSection;
      dashboard?: DashboardSection;
      timeliness?: TimelinessSection;
      'real-work'?: RealWorkSection;
      'store-cost'?: StoreCostSection;
      waiters?: WaitersSection;
      'burst-reads'?: BurstReadsSection;
      writer?: WriterSection;
      tracing?: TracingSection;
      'pg-statements'?: PgStatementsSection;
      'pg-hosts'?: HostsSection;
      'pg-burst-reads'?: BurstReadsSection;
      'pg-floor'?: FloorSection;
    };
  /** Loadavg (1 min) when each section began: how noisy its neighbours were. */
  section_loadavg: Partial<Record<SectionName, number>>;
  targets: Target[];
  errors: { section: SectionName; error: string }[];
}
