/**
 * `stats` lists classes in code-unit order, as the database's ORDER BY class
 * does: the same on every machine, whatever its locale (localeCompare put
 * "a_1" before "a1" and "b" before "B" under en-US, and costs an ICU collator
 * at every run).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { tempDir } from '../helpers/temp.js';
import { leaseholdJson } from './helpers.js';

const newDir = tempDir('leasehold-class-order-');

interface Stats {
  jobs: { by_class: { class: string }[] };
  queues: { class: string }[];
}

describe('stats on SQLite with --db', () => {
  it('orders classes by code unit: capitals, then "-", digits and "_" as their codes fall', async () => {
    const database = join(newDir(), 'queue.db');
    await migrate({ database });
    const jobs = ['b', 'a_1', 'B', 'a1', 'a-1'].map((name) => JSON.stringify({ class: name, payload: {} })).join('\n');
    await leaseholdJson(['--db', database, 'enqueue', '--allow-unknown-class', '--file', '-'], { input: `${jobs}\n` });
    const stats = await leaseholdJson<Stats>(['--db', database, 'stats']);
    const codeUnitOrder = ['B', 'a-1', 'a1', 'a_1', 'b'];
    expect(stats.jobs.by_class.map((row) => row.class)).toEqual(codeUnitOrder);
    expect(stats.queues.map((row) => row.class)).toEqual(codeUnitOrder);
  });
});
