/** Section 4: enqueue speed, one job at a time and in bulk, by the CLI and by the library. */
import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarize, type Stat } from './common.js';
import type { BenchContext } from './context.js';
import { sqliteFile } from './database.js';
import { BENCH_CLASS, FILL_CHUNK, fillQueue, openBenchQueue, writeConfig, writeNoopHandler } from './leasehold.js';
import { LEASEHOLD_CLI } from './processes.js';

export interface EnqueueSection {
  unit: 'jobs/s';
  cli_single: { jobs: number; jobs_per_sec: Stat; ms_per_job: Stat; command: string };
  library_single: { jobs: number; jobs_per_sec: Stat; call: string };
  library_bulk: { jobs: number; chunk: number; jobs_per_sec: Stat; call: string };
  cli_bulk: { jobs: number; jobs_per_sec: Stat; command: string };
}

function freshConfig(ctx: BenchContext, label: string): { dir: string; config: string } {
  const dir = ctx.dirs.make(`enqueue-${label}`);
  return { dir, config: writeConfig(dir, { database: sqliteFile(dir), handler: writeNoopHandler(dir), processes: 1 }) };
}

async function cli(args: string[]): Promise<string> {
  const result = await execa(process.execPath, [LEASEHOLD_CLI, ...args], { reject: false, timeout: 120_000 });
  if (result.exitCode !== 0)
    throw new Error(`leasehold ${args.join(' ')} exited ${String(result.exitCode)}: ${result.stderr}`);
  return result.stdout;
}

export async function runEnqueue(ctx: BenchContext): Promise<EnqueueSection> {
  const { sizes } = ctx;
  const cliSingle: number[] = [];
  const librarySingle: number[] = [];
  const libraryBulk: number[] = [];
  const cliBulk: number[] = [];
  for (let run = 0; run < sizes.runs; run++) {
    ctx.progress(`enqueue run ${run + 1}/${sizes.runs}: ${sizes.enqueueCliSingle} \`leasehold enqueue\` processes`);
    {
      const { config } = freshConfig(ctx, 'cli');
      // The tables are made off the clock: an enqueue creates none (issue 54).
      await cli(['--config', config, 'migrate', '--json']);
      const started = performance.now();
      for (let i = 0; i < sizes.enqueueCliSingle; i++)
        await cli(['--config', config, 'enqueue', BENCH_CLASS, '--payload', `{"n":${i}}`, '--json']);
      cliSingle.push(sizes.enqueueCliSingle / ((performance.now() - started) / 1000));
    }
    ctx.progress(`enqueue run ${run + 1}/${sizes.runs}: ${sizes.enqueueLibrarySingle} queue.enqueue calls`);
    {
      const { dir } = freshConfig(ctx, 'lib');
      const queue = await openBenchQueue(sqliteFile(dir));
      try {
        const started = performance.now();
        for (let i = 0; i < sizes.enqueueLibrarySingle; i++)
          await queue.enqueue({ class: BENCH_CLASS, payload: { n: i } });
        librarySingle.push(sizes.enqueueLibrarySingle / ((performance.now() - started) / 1000));
      } finally {
        await queue.close();
      }
    }
    ctx.progress(`enqueue run ${run + 1}/${sizes.runs}: enqueueMany ${sizes.enqueueBulk}`);
    {
      const { dir } = freshConfig(ctx, 'bulk');
      const queue = await openBenchQueue(sqliteFile(dir));
      try {
        libraryBulk.push(sizes.enqueueBulk / (await fillQueue(queue, sizes.enqueueBulk)));
      } finally {
        await queue.close();
      }
    }
    ctx.progress(`enqueue run ${run + 1}/${sizes.runs}: leasehold enqueue --file (${sizes.enqueueBulk} lines)`);
    {
      const { dir, config } = freshConfig(ctx, 'clibulk');
      await cli(['--config', config, 'migrate', '--json']);
      const file = join(dir, 'jobs.jsonl');
      writeFileSync(
        file,
        Array.from(
          { length: sizes.enqueueBulk },
          (_, i) => `${JSON.stringify({ class: BENCH_CLASS, payload: { n: i } })}\n`,
        ).join(''),
      );
      const started = performance.now();
      const out = JSON.parse(await cli(['--config', config, 'enqueue', '--file', file, '--json'])) as { count: number };
      const seconds = (performance.now() - started) / 1000;
      if (out.count !== sizes.enqueueBulk) throw new Error(`enqueue --file wrote ${out.count} of ${sizes.enqueueBulk}`);
      cliBulk.push(sizes.enqueueBulk / seconds);
    }
  }
  return {
    unit: 'jobs/s',
    cli_single: {
      jobs: sizes.enqueueCliSingle,
      jobs_per_sec: summarize(cliSingle, 1),
      ms_per_job: summarize(
        cliSingle.map((rate) => 1000 / rate),
        1,
      ),
      command:
        'node dist/cli/leasehold.js --config F enqueue bench --payload JSON --json (one process per job, run one after another)',
    },
    library_single: {
      jobs: sizes.enqueueLibrarySingle,
      jobs_per_sec: summarize(librarySingle),
      call: 'await queue.enqueue(...) in a loop (one transaction per job)',
    },
    library_bulk: {
      jobs: sizes.enqueueBulk,
      chunk: FILL_CHUNK,
      jobs_per_sec: summarize(libraryBulk),
      call: `await queue.enqueueMany(chunk of ${FILL_CHUNK})`,
    },
    cli_bulk: {
      jobs: sizes.enqueueBulk,
      jobs_per_sec: summarize(cliBulk),
      command: 'node dist/cli/leasehold.js --config F enqueue --file jobs.jsonl --json (one process, spawn to exit)',
    },
  };
}
