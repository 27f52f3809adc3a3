/**
 * Section 22: what tracing costs (issue 44). Section 1's drain of no-op jobs
 * on SQLite, one child, in rounds: with tracing off (a resolve hook hides
 * @opentelemetry/api, as in an application without it), and on (an SDK
 * preloaded with a no-op exporter: every attempt's span is made, recorded
 * and dropped, in batches as a deployment's would be), and `context`: the
 * same preload without the SDK, whose spans then record nothing (what the
 * on arm costs beyond it is the SDK's recording). With LEASEHOLD_BENCH_BASELINE set to another checkout
 * (built), its `supervise` runs the same drain in the same rounds: the
 * targets are this build over that one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Stat } from './common.js';
import type { BenchContext } from './context.js';
import { benchBaseline } from './baseline.js';
import { cpuOf, ratesOf, ratioOf, runRounds } from './rounds.js';
import { leaseholdDrain } from './throughput.js';

const CLAIM_BATCH = 64;
export const TRACING_OFF_TARGET = 0.98;
export const TRACING_ON_TARGET = 0.9;

type ArmName = 'off' | 'on' | 'context' | 'baseline';

export interface TracingSection {
  method: string;
  jobs: number;
  results: { arm: ArmName; jobs_per_sec: Stat; cpu_ms_per_1k_jobs: Stat }[];
  /** Within each round: on over off, and each over the baseline when there is one. */
  on_over_off?: Stat;
  off_over_baseline?: Stat;
  on_over_baseline?: Stat;
}

/** A preload that refuses @opentelemetry/* (its resolve hook runs on the loader's thread). */
function writeHidingPreload(dir: string): string {
  const hooks = join(dir, 'hide-otel-hooks.mjs');
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier.startsWith('@opentelemetry/')) throw Object.assign(new Error('hidden: ' + specifier), { code: 'ERR_MODULE_NOT_FOUND' });
  return next(specifier, context);
}
`,
  );
  const preload = join(dir, 'hide-otel.mjs');
  writeFileSync(
    preload,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  return preload;
}

/**
 * A preload that sets the async context manager and, `withSdk`, registers an
 * SDK whose exporter drops every span; its packages named where this bench
 * finds them.
 */
function writeNoopSdkPreload(dir: string, withSdk: boolean): string {
  const from = (name: string) => JSON.stringify(import.meta.resolve(name));
  const preload = join(dir, withSdk ? 'otel-noop.mjs' : 'otel-context.mjs');
  const sdk = `import { BasicTracerProvider, BatchSpanProcessor } from ${from('@opentelemetry/sdk-trace-base')};
const dropped = { export: (spans, done) => done({ code: 0 }), shutdown: async () => undefined };
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropped)] }));
`;
  writeFileSync(
    preload,
    `import { context, trace } from ${from('@opentelemetry/api')};
import { AsyncLocalStorageContextManager } from ${from('@opentelemetry/context-async-hooks')};
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
${withSdk ? sdk : ''}`,
  );
  return preload;
}

export async function runTracing(ctx: BenchContext): Promise<TracingSection> {
  const baseline = benchBaseline();
  const dir = ctx.dirs.make('tracing-preloads');
  const withPreload = (preload: string) => ({ ...process.env, NODE_OPTIONS: `--import ${preload}` });
  const arms: { name: ArmName; env?: NodeJS.ProcessEnv; supervise?: string }[] = [
    { name: 'off', env: withPreload(writeHidingPreload(dir)) },
    { name: 'on', env: withPreload(writeNoopSdkPreload(dir, true)) },
    { name: 'context', env: withPreload(writeNoopSdkPreload(dir, false)) },
    ...(baseline ? [{ name: 'baseline' as const, supervise: baseline.supervise }] : []),
  ];
  const rounds = await runRounds(
    ctx,
    'tracing',
    arms.map((arm) => ({
      key: arm.name,
      label: `tracing ${arm.name}`,
      drain: () => leaseholdDrain(ctx, 1, CLAIM_BATCH, 'sqlite', { env: arm.env, supervise: arm.supervise }),
    })),
  );
  return {
    method:
      `section 1's drain on SQLite, ${ctx.sizes.jobs} no-op jobs, 1 child, claim_batch ${CLAIM_BATCH}, in rounds: ` +
      `tracing off (a resolve hook hides @opentelemetry/api), on (an SDK with a no-op exporter, preloaded), ` +
      `context (the same preload without the SDK: spans that record nothing)` +
      (baseline === undefined ? '' : `, and the baseline build's supervise`),
    jobs: ctx.sizes.jobs,
    results: arms.map((arm) => ({
      arm: arm.name,
      jobs_per_sec: ratesOf(rounds, arm.name).jobs_per_sec,
      cpu_ms_per_1k_jobs: cpuOf(rounds, arm.name),
    })),
    on_over_off: ratioOf(rounds, 'on', 'off'),
    off_over_baseline: ratioOf(rounds, 'off', 'baseline'),
    on_over_baseline: ratioOf(rounds, 'on', 'baseline'),
  };
}

/** Issue 44's targets, as checkTargets' arguments: id, what, the figure, whether it is met. */
export function tracingTargets(
  section: TracingSection | undefined,
): [string, string, number | undefined, (value: number) => boolean][] {
  return [
    [
      '44-tracing-off',
      `no-op jobs, tracing off: >= ${TRACING_OFF_TARGET}x the baseline build (within a round)`,
      section?.off_over_baseline?.median,
      (v) => v >= TRACING_OFF_TARGET,
    ],
    [
      '44-tracing-on',
      `no-op jobs, tracing on with a no-op exporter: >= ${TRACING_ON_TARGET}x the baseline build (within a round)`,
      section?.on_over_baseline?.median,
      (v) => v >= TRACING_ON_TARGET,
    ],
  ];
}
