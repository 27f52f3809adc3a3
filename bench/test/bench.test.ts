/**
 * `npm run bench -- --quick`: a smoke run of every section. Not a timing
 * assertion: the run ends, exits 0, prints a JSON document with every
 * section filled with finite numbers, and leaves no process behind.
 * It needs the bench's peers (its own install, `npm run bench:install`),
 * a redis-server on PATH and the PostgreSQL server of the product's suites.
 */
import { execa } from 'execa';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SECTIONS } from '../src/report.js';

const BENCH = fileURLToPath(new URL('../dist/bench.js', import.meta.url));
/** This checkout, built, as the baseline build too: the sections' baseline arms and their targets are smoke-tested with the rest. */
const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
/** The server the product's suites use (test/helpers/postgres.ts), so CI's and a developer's work here too. */
const PG_URL = process.env.LEASEHOLD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-bench-test-'));
  dirs.push(dir);
  return dir;
}

/** Every leaf of a JSON value with its path. */
function leaves(value: unknown, path = '$'): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((item, i) => leaves(item, `${path}[${i}]`));
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => leaves(item, `${path}.${key}`));
  return [[path, value]];
}

/** Processes whose command line mentions `text` (the bench's own temp folder). */
function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(text)) found.push(`${name}: ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The benchmark's schemas on the PostgreSQL server (it makes one per measurement and drops it). */
async function benchSchemas(): Promise<string[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const result = await client.query<{ name: string }>(
      "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'leasehold\\_bench\\_%'",
    );
    return result.rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

describe('npm run bench -- --quick', () => {
  it('runs every section and prints finite numbers', { timeout: 400_000 }, async () => {
    const dir = newDir();
    const out = join(dir, 'bench.json');
    // Its temp folders go under `dir`, so that its processes can be told from anyone else's.
    const schemasBefore = new Set(await benchSchemas());
    const run = await execa(process.execPath, [BENCH, '--quick', '--out', out, '--pg', PG_URL], {
      reject: false,
      env: { TMPDIR: dir, LEASEHOLD_BENCH_BASELINE: CHECKOUT },
      timeout: 380_000,
    });
    if (run.exitCode !== 0) console.error(run.stderr);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('targets (issues 1, 5-7, 11-15, 30, 32, 41-44 and 52-54)');
    expect(run.stderr).toContain('CPU ceiling, ');

    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      quick: boolean;
      errors: unknown[];
      machine: { nproc: number; sqlite: string; loadavg_start: number[] };
      sections: Record<string, unknown>;
      targets: { id: string; value: number | null }[];
    };
    expect(report.quick).toBe(true);
    expect(report.errors).toEqual([]);
    expect(report.machine.nproc).toBeGreaterThan(0);
    expect(report.machine.sqlite).toMatch(/^3\./);
    expect(Object.keys(report.sections).sort()).toEqual([...SECTIONS].sort());

    for (const name of SECTIONS) {
      const numbers = leaves(report.sections[name]).filter(([, v]) => typeof v === 'number' || v === null);
      expect(numbers.length, `${name} has numbers`).toBeGreaterThan(0);
      for (const [path, value] of numbers) {
        expect(value, `${name} ${path}`).not.toBeNull();
        expect(Number.isFinite(value), `${name} ${path} = ${String(value)}`).toBe(true);
        expect(value as number, `${name} ${path}`).toBeGreaterThanOrEqual(0);
      }
    }

    // The headline figures are rates and times: strictly positive.
    const positive = (path: string) =>
      leaves(report.sections)
        .filter(([p]) => p.includes(path) && p.endsWith('.median'))
        .map(([p, v]) => [p, v] as const);
    for (const key of [
      'jobs_per_sec',
      'reclaim_ms',
      'pass_ms',
      'rss_mb',
      'by_log',
      'wall_ms',
      'kill_late_ms',
      'cpu_us_per_job',
    ]) {
      const found = positive(key);
      expect(found.length, key).toBeGreaterThan(0);
      for (const [p, v] of found) expect(v as number, p).toBeGreaterThan(0);
    }
    expect(report.targets.map((t) => t.id).sort()).toEqual([
      '1-vs-plainjob',
      '1-vs-raw',
      '11-max',
      '12-pg',
      '12-scale',
      '13-reads',
      '14-cli',
      '15-dashboard',
      '30-child-heartbeat',
      '30-job-heartbeat',
      '30-kill-late',
      '30-schedule-late',
      '32-await-cpu',
      '32-await-wide',
      '32-bullmq-1',
      '32-bullmq-2',
      '32-burn-scale',
      '32-cpu-1',
      '32-cpu-2',
      '32-metrics',
      '32-pg-graphile',
      '32-pg-graphile-local',
      '32-reads',
      '32-store',
      '41-tx-bulk-postgres',
      '41-tx-bulk-sqlite',
      '41-tx-single-postgres',
      '41-tx-single-sqlite',
      '42-waiters-postgres',
      '42-waiters-sqlite',
      '43-burst-overview',
      '43-burst-stats',
      '43-scale-2',
      '43-scale-4',
      '43-timer-late',
      '44-tracing-off',
      '44-tracing-on',
      '5-p50',
      '5-p99',
      '52-await-wide',
      '52-await-wide-cpu',
      '52-classes',
      '52-cpu-8',
      '52-cpu-plainjob',
      '52-scale-8',
      '52-timer-late',
      '53-hosts-rise',
      '53-hosts-server-cpu',
      '53-pg-burst-overview',
      '53-pg-burst-stats',
      '53-pg-graphile-local-1',
      '53-pg-server-cpu',
      '54-cli',
      '6-p50',
      '7-depth',
    ]);
    for (const target of report.targets) expect(target.value, target.id).not.toBeNull();

    expect(processesMentioning(dir)).toEqual([]);
    expect((await benchSchemas()).filter((name) => !schemasBefore.has(name))).toEqual([]);
  });
});
