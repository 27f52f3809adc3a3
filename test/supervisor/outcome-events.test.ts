/**
 * Queue.events across a crash, on both drivers: a consumer process appends
 * each outcome's `id cursor` line as a real supervisor runs 5,000 jobs; it
 * is SIGKILLed mid-stream and started again after the cursor of its last
 * complete line. Across both runs it sees each outcome exactly once.
 */
import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { trackProcess, useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const newDir = tempDir('leasehold-outcome-events-');
const schemas = schemaPool('lh_outcome_events');
const CONSUMER = path.resolve('test/fixtures/outcome-consumer.mjs');
const JOBS = 5_000;
/** Where the first consumer is killed: well into the stream, well before its end. */
const KILL_AFTER = 1_000;

/** The complete lines of a consumer's file (a line cut by the kill has no newline yet), as [id, cursor]. */
function linesOf(file: string): [number, string][] {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.pop();
  return lines.map((line) => {
    const [id, cursor] = line.split(' ');
    return [Number(id), cursor!];
  });
}

function consumer(database: string, file: string, after: string) {
  const child = execa('node', [CONSUMER, database, file, after], { reject: false, stdin: 'ignore', stderr: 'inherit' });
  trackProcess(child.pid!, `outcome consumer after ${after}`);
  return child;
}

describe.each(['sqlite', 'postgres'] as const)('events on %s', (driver) => {
  it(`a consumer killed mid-stream and started again from its cursor sees each of ${JOBS} outcomes once`, async () => {
    const dir = newDir();
    const database = driver === 'sqlite' ? path.join(dir, 'queue.db') : pgUrl(schemas.next());
    const sup = await startSupervisor({
      dir,
      database,
      logLevel: 'warn',
      classes: [{ name: 'tick', handler: 'succeed', processes: 2, concurrency: 4 }],
    });
    const [first, second] = [path.join(dir, 'first.txt'), path.join(dir, 'second.txt')];
    writeFileSync(first, '');
    const run1 = consumer(database, first, '0');
    const ids: number[] = [];
    for (let batch = 0; batch < JOBS; batch += 1_000)
      ids.push(
        ...(await sup.queue.enqueueMany(Array.from({ length: 1_000 }, () => ({ class: 'tick' })))).map((j) => j.id),
      );

    await waitFor(`${KILL_AFTER} outcomes seen`, () => linesOf(first).length >= KILL_AFTER, { timeoutMs: 60_000 });
    // no job starts until the consumer is back: outcomes go on after its restart too
    await sup.queue.pause('tick');
    run1.kill('SIGKILL');
    await run1;
    const seenFirst = linesOf(first);
    const [, cursor] = seenFirst.at(-1)!;
    const run2 = consumer(database, second, cursor);
    await sup.queue.resume('tick');

    await waitFor(`all ${JOBS} outcomes seen`, () => seenFirst.length + linesOf(second).length >= JOBS, {
      timeoutMs: 120_000,
      intervalMs: 200,
    });
    run2.kill('SIGTERM');
    await run2;
    const seen = [...seenFirst, ...linesOf(second)].map(([id]) => id);
    expect(seenFirst.length).toBeLessThan(JOBS);
    expect(seen).toHaveLength(JOBS);
    expect(new Set(seen).size).toBe(JOBS);
    expect([...seen].sort((a, b) => a - b)).toEqual(ids);
    await sup.stop();
  });
});
