/**
 * node dist/scripts/skew-drain.js [--jobs N] [--ms M] [--rounds R] [--database postgres://...]
 *
 * How long two hosts take to drain a PostgreSQL queue when one host's wall
 * clock is 20 s ahead (libfaketime) against when neither is: the issue's
 * "≤ 1.2× the unskewed run". Each round runs both arms, interleaved; each
 * arm is two supervisors ("host-a", "host-b") on a fresh schema, timed from
 * the enqueue until every job has SUCCEEDED. Prints one JSON line per run
 * and a summary (medians, their ratio, and the attempts that were not the
 * first). Run it under `flock /tmp/bench.lock`.
 */
import { execa } from 'execa';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { stringify } from 'yaml';
import { fileURLToPath } from 'node:url';
import { openQueue } from '../src/queue/queue.js';
import { migrate } from '../src/store/open.js';

const FAKETIME = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const SUPERVISE = fileURLToPath(new URL('../supervisor/main.js', import.meta.url));
const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '200' },
    ms: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
    database: {
      type: 'string',
      default: process.env.LEASEHOLD_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    },
  },
});
const jobs = Number(values.jobs);
const jobMs = Number(values.ms);

async function run(skewed: boolean, round: number): Promise<{ drainMs: number; retried: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'leasehold-skew-drain-'));
  const schema = `lh_skew_drain_${process.pid}_${round}_${skewed ? 'skewed' : 'plain'}`;
  const url = new URL(values.database);
  url.searchParams.set('schema', schema);
  const database = url.toString();
  const handler = join(dir, 'sleep.mjs');
  writeFileSync(handler, 'export default (job) => new Promise((done) => setTimeout(done, job.payload.ms));\n');
  await migrate({ database });
  const queue = await openQueue({ database, actor: 'skew-drain', unknownClass: 'ignore' });
  const supervisors = ['host-a', 'host-b'].map((host) => {
    const config = join(dir, `${host}.yaml`);
    const work = { name: 'work', handler, processes: 2, lease_seconds: 4, heartbeat_seconds: 1, max_retries: 5 };
    writeFileSync(
      config,
      stringify({ database, host, log: { level: 'warn', file: join(dir, `${host}.log`) }, classes: [work] }),
    );
    const fast = skewed && host === 'host-b';
    const env = fast ? { LD_PRELOAD: FAKETIME, FAKETIME: '+20s', FAKETIME_DONT_FAKE_MONOTONIC: '1' } : {};
    return execa('node', [SUPERVISE, '--config', config], { env, reject: false, stdio: 'ignore' });
  });
  try {
    await sleep(3_000); // both hosts' children up, as a steady queue would find them
    const started = performance.now();
    await queue.enqueueMany(Array.from({ length: jobs }, () => ({ class: 'work', payload: { ms: jobMs } })));
    for (;;) {
      const counts = await queue.store.statsCounts();
      const done = counts.find((c) => c.status === 'SUCCEEDED')?.count ?? 0;
      if (done >= jobs) break;
      await sleep(50);
    }
    const drainMs = performance.now() - started;
    const attempts = (await queue.store.jobList({ limit: jobs })).reduce((sum, job) => sum + job.attempts, 0);
    return { drainMs, retried: attempts - jobs };
  } finally {
    for (const supervisor of supervisors) supervisor.kill('SIGTERM');
    await Promise.all(supervisors);
    await queue.close();
    const client = new pg.Client({ connectionString: values.database });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const runs: Record<'plain' | 'skewed', { drainMs: number; retried: number }[]> = { plain: [], skewed: [] };
for (let round = 0; round < Number(values.rounds); round++) {
  for (const skewed of round % 2 === 0 ? [false, true] : [true, false]) {
    const result = await run(skewed, round);
    runs[skewed ? 'skewed' : 'plain'].push(result);
    console.log(JSON.stringify({ round, arm: skewed ? 'skewed' : 'plain', ...result }));
  }
}
const plain = median(runs.plain.map((r) => r.drainMs));
const skewed = median(runs.skewed.map((r) => r.drainMs));
console.log(
  JSON.stringify({
    jobs,
    job_ms: jobMs,
    plain_median_ms: Math.round(plain),
    skewed_median_ms: Math.round(skewed),
    ratio: Number((skewed / plain).toFixed(3)),
    retried: { plain: runs.plain.map((r) => r.retried), skewed: runs.skewed.map((r) => r.retried) },
  }),
);
