/**
 * npm run bench -- [--quick] [--only SECTION[,SECTION]] [--out FILE] [--table] [--claim-batch N] [--runs N] [--processes N,...] [--pg URL] [--keep]
 *
 * Runs the sections of RUNNERS that --only names (all by default), prints
 * one JSON document and a table (docs/performance.md says what each
 * measures), and stops every process and drops every schema it made, even
 * on error.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defaultClaimBatch } from '../../dist/src/limits.js';
import { isPostgresUrl, redactDatabase } from '../../dist/src/store/database-url.js';
import { round, TempDirs } from './common.js';
import { runComparison, runPgComparison } from './compare.js';
import { runCli } from './cli.js';
import { runDashboard } from './dashboard.js';
import { runConcurrency } from './concurrency.js';
import type { BenchContext } from './context.js';
import { FULL, QUICK } from './context.js';
import { runDepth } from './depth.js';
import { runEnqueue } from './enqueue.js';
import { runEnqueueTx } from './enqueue-tx.js';
import { runHeadOfLine } from './head-of-line.js';
import { runLatency, runPgLatency } from './latency.js';
import { loadAverages, machineInfo, packageVersion, sourceInfo } from './machine.js';
import { runOverhead } from './overhead.js';
import { ProcessRegistry } from './processes.js';
import { runReads } from './reads.js';
import { runRealWork } from './real-work.js';
import { runWriter } from './writer.js';
import { runPgStatements } from './pg-statements.js';
import { runHosts } from './hosts.js';
import { runPgFloor } from './pg-floor.js';
import { runTracing } from './tracing.js';
import { runRecovery } from './recovery.js';
import { runStoreCost } from './store-cost.js';
import { renderTable } from './render.js';
import { SECTIONS, type BenchReport, type SectionName } from './report.js';
import { checkTargets } from './targets.js';
import { runTimeliness } from './timeliness.js';
import { runWaiters } from './waiters.js';
import { runBurstReads } from './burst-reads.js';

const DEFAULT_CLAIM_BATCH = defaultClaimBatch(1);
const DEFAULT_PG_URL = process.env.LEASEHOLD_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

type Sections = BenchReport['sections'];

/** A runner fills one section, or several whose measurements interleave (1-3 with BullMQ, 9 with graphile-worker). */
interface SectionRunner {
  names: SectionName[];
  run(ctx: BenchContext, wanted: ReadonlySet<SectionName>): Promise<Sections>;
}

function single<N extends SectionName>(
  name: N,
  run: (ctx: BenchContext) => Sections[N] | Promise<Sections[N]>,
): SectionRunner {
  return { names: [name], run: async (ctx) => ({ [name]: await run(ctx) }) };
}

/**
 * The section registry, in the order they run. A new section adds its name
 * to SECTIONS, its JSON to BenchReport and a renderer to RENDER (report.ts),
 * and a runner here; a new target is one more line of checkTargets (targets.ts).
 */
const RUNNERS: SectionRunner[] = [
  {
    names: ['throughput', 'plainjob', 'raw', 'bullmq'],
    run: (ctx, wanted) =>
      runComparison(
        ctx,
        {
          throughput: wanted.has('throughput'),
          plainjob: wanted.has('plainjob'),
          raw: wanted.has('raw'),
          bullmq: wanted.has('bullmq'),
        },
        packageVersion('plainjob'),
      ),
  },
  single('enqueue', runEnqueue),
  single('enqueue-tx', runEnqueueTx),
  single('latency', runLatency),
  single('recovery', runRecovery),
  single('depth', runDepth),
  single('overhead', runOverhead),
  {
    names: ['pg-throughput', 'graphile-worker'],
    run: (ctx, wanted) =>
      runPgComparison(ctx, {
        'pg-throughput': wanted.has('pg-throughput'),
        'graphile-worker': wanted.has('graphile-worker'),
      }),
  },
  single('pg-latency', runPgLatency),
  single('head-of-line', runHeadOfLine),
  single('concurrency', runConcurrency),
  single('reads', (ctx) => runReads(ctx, ['sqlite', 'postgres'])),
  single('cli', runCli),
  single('dashboard', (ctx) => runDashboard(ctx, ['sqlite', 'postgres'])),
  single('timeliness', runTimeliness),
  single('real-work', runRealWork),
  single('store-cost', runStoreCost),
  single('waiters', runWaiters),
  single('burst-reads', (ctx) => runBurstReads(ctx, 'sqlite', ctx.sizes.burstJobs)),
  single('writer', runWriter),
  single('tracing', runTracing),
  single('pg-statements', runPgStatements),
  single('pg-hosts', runHosts),
  single('pg-burst-reads', (ctx) => runBurstReads(ctx, 'postgres', ctx.sizes.pgBurstJobs)),
  single('pg-floor', runPgFloor),
];

const USAGE = `usage: npm run bench -- [--quick] [--only ${SECTIONS.join('|')}[,...]] [--out FILE] [--table] [--claim-batch N] [--runs N] [--pg URL] [--keep]\n`;

function usage(message: string): never {
  process.stderr.write(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}

if (process.argv.includes('--help')) {
  process.stdout.write(USAGE);
  process.exit(0);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      table: { type: 'boolean', default: false },
      'claim-batch': { type: 'string', default: String(DEFAULT_CLAIM_BATCH) },
      runs: { type: 'string' },
      processes: { type: 'string' },
      pg: { type: 'string', default: DEFAULT_PG_URL },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
  });
} catch (error) {
  usage((error as Error).message);
}
const { values } = parsed;
const claimBatch = Number(values['claim-batch']);
if (!Number.isInteger(claimBatch) || claimBatch < 1)
  usage(`--claim-batch must be an integer >= 1, got ${values['claim-batch']}`);
// More rounds than the default 3 narrow a noisy machine's medians (ratios are still taken within each round).
const runs = values.runs === undefined ? undefined : Number(values.runs);
if (runs !== undefined && (!Number.isInteger(runs) || runs < 1))
  usage(`--runs must be an integer >= 1, got ${values.runs}`);
// The children counts of the leasehold drains (section 1), where the run's default is 1, 2 and 4.
const processes = values.processes?.split(',').map(Number);
if (processes !== undefined && !processes.every((n) => Number.isInteger(n) && n >= 1))
  usage(`--processes must be integers >= 1, separated by commas, got ${values.processes}`);
const only = values.only === undefined ? [...SECTIONS] : values.only.split(',').map((name) => name.trim());
for (const name of only)
  if (!(SECTIONS as readonly string[]).includes(name)) usage(`unknown section ${JSON.stringify(name)}`);
const wanted = new Set(only as SectionName[]);
const pgUrl = values.pg;
if (!isPostgresUrl(pgUrl)) usage(`--pg must be a postgres:// URL, got ${pgUrl}`);

const tableOut = values.table ? process.stdout : process.stderr;
const startedAt = new Date();
const started = performance.now();
const registry = new ProcessRegistry();
const dirs = new TempDirs(values.keep);
const ctx: BenchContext = {
  sizes: {
    ...(values.quick ? QUICK : FULL),
    ...(runs === undefined ? {} : { runs }),
    ...(processes === undefined ? {} : { processes }),
  },
  quick: values.quick,
  claimBatch,
  processes: registry,
  dirs,
  pgUrl,
  keep: values.keep,
  progress: (message) =>
    process.stderr.write(`[bench ${Math.round((performance.now() - started) / 1000)}s] ${message}\n`),
};

// Ctrl-C: stop what we started, then go.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`bench: ${signal}, stopping the processes started\n`);
    void registry.stopAll(3_000).finally(() => {
      dirs.removeAll();
      process.exit(130);
    });
  });
}

const report: BenchReport = {
  bench: 'leasehold',
  command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
  quick: values.quick,
  started_at: startedAt.toISOString(),
  duration_seconds: 0,
  machine: { ...(await machineInfo()), loadavg_end: [] },
  source: sourceInfo(),
  params: {
    runs: ctx.sizes.runs,
    jobs: ctx.sizes.jobs,
    claim_batch: claimBatch,
    processes: ctx.sizes.processes,
    postgres: (
      [
        'enqueue-tx',
        'pg-throughput',
        'pg-latency',
        'graphile-worker',
        'waiters',
        'pg-statements',
        'pg-hosts',
        'pg-floor',
      ] as const
    ).some((name) => wanted.has(name))
      ? redactDatabase(pgUrl)
      : null,
  },
  sections: {},
  section_loadavg: {},
  targets: [],
  errors: [],
};

async function section(names: SectionName[], work: () => Promise<void>): Promise<void> {
  for (const n of names) report.section_loadavg[n] = loadAverages()[0] ?? 0;
  try {
    await work();
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    ctx.progress(`section ${names.join('+')} failed: ${message}`);
    for (const n of names)
      report.errors.push({ section: n, error: error instanceof Error ? error.message : String(error) });
  } finally {
    // A failed section must not leave its processes to disturb the next one.
    await registry.stopAll(5_000);
  }
}

try {
  for (const runner of RUNNERS) {
    const names = runner.names.filter((name) => wanted.has(name));
    if (names.length > 0)
      await section(names, async () => void Object.assign(report.sections, await runner.run(ctx, wanted)));
  }
} finally {
  await registry.stopAll(5_000);
  const kept = dirs.removeAll();
  if (kept.length > 0) ctx.progress(`kept ${kept.length} folder(s): ${kept.join(' ')}`);
}

report.machine.loadavg_end = loadAverages();
report.duration_seconds = round((performance.now() - started) / 1000);
report.targets = checkTargets(report);
const json = `${JSON.stringify(report, null, 2)}\n`;
if (values.out !== undefined) writeFileSync(values.out, json);
else process.stdout.write(json);
tableOut.write(renderTable(report));
process.exitCode = report.errors.length > 0 ? 1 : 0;
