/**
 * Flows and keys through the real `leasehold` binary, on a real SQLite file
 * and on the real PostgreSQL: enqueue with --depends-on, --on-parent-failure,
 * --key-scope and --key-ttl, and a bulk file whose lines name earlier lines
 * by ref (across the file's transactions too); then what `show`, `list
 * --status WAITING` and `stats` say about it, before and after an operator's
 * cancel sends a parent's dependents their ways.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/store/open.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { leasehold, leaseholdJson } from './helpers.js';
import type { JobJson, ShowJson, StatsJson } from './json-shapes.js';

const newDir = tempDir('leasehold-cli-flows-');
const schemas = schemaPool('lh_cli_flows');

interface FlowJson {
  id: number;
  class: string;
  status: string;
  error_code: string | null;
}
type FlowShowJson = ShowJson & { parents: FlowJson[]; children: FlowJson[]; more_children: number };

const HOUR = 3_600_000;

describe.each([
  ['SQLite', () => join(newDir(), 'queue.db')],
  ['PostgreSQL', () => pgUrl(schemas.next())],
])('flows and keys from the command line on %s', (_driver, database) => {
  const cli = async (db: string) => {
    await migrate({ database: db });
    const args = (...rest: string[]) => ['--db', db, ...rest];
    const run = (...rest: string[]) => leasehold(args(...rest));
    const json = <T>(...rest: string[]) => leaseholdJson<T>(args(...rest));
    const enqueue = (...rest: string[]) =>
      json<{ id: number; created: boolean }>('enqueue', '--allow-unknown-class', ...rest);
    const show = (id: number) => json<FlowShowJson>('show', String(id));
    const file = (lines: object[]) => {
      const path = join(newDir(), 'jobs.jsonl');
      writeFileSync(path, lines.map((line) => JSON.stringify(line)).join('\n\n'));
      return path;
    };
    return { run, json, enqueue, show, file };
  };

  it('a fan-out and a fan-in: WAITING in show, list and stats; a cancelled parent sends each dependent its way', async () => {
    const { run, json, enqueue, show, file } = await cli(database());
    const root = await enqueue('fetch');
    expect(root).toEqual({ id: root.id, created: true });
    const bulk = await json<{ count: number; ids: number[]; created: boolean[] }>(
      'enqueue',
      '--allow-unknown-class',
      '--file',
      file([
        { class: 'part', ref: 'a', depends_on: [root.id] },
        { class: 'part', ref: 'b', depends_on: [root.id] },
        {
          class: 'join',
          depends_on: ['a', 'b'],
          on_parent_failure: 'run',
          key: 'join-1',
          key_scope: 'incomplete',
          key_ttl: 3600,
        },
      ]),
    );
    const [a, b, join] = bulk.ids as [number, number, number];
    expect(bulk).toEqual({ count: 3, ids: [a, b, join], created: [true, true, true] });

    const waiting = await json<{ jobs: JobJson[] }>('list', '--status', 'WAITING');
    expect(waiting.jobs.map((job) => [job.id, job.status])).toEqual([
      [join, 'WAITING'],
      [b, 'WAITING'],
      [a, 'WAITING'],
    ]);
    expect((await json<{ jobs: JobJson[] }>('list', '--status', 'waiting', '--class', 'part')).jobs).toHaveLength(2);

    const joined = await show(join);
    expect(joined.job).toMatchObject({
      status: 'WAITING',
      pending_parents: 2,
      on_parent_failure: 'run',
      idempotency_key: 'join-1',
      key_scope: 'incomplete',
    });
    expect((joined.job.key_expires_at as number) - (joined.job.created_at as number)).toBeGreaterThan(HOUR - 5_000);
    expect(joined.parents).toEqual([
      { id: a, class: 'part', status: 'WAITING', error_code: null },
      { id: b, class: 'part', status: 'WAITING', error_code: null },
    ]);
    expect(joined).toMatchObject({ children: [], more_children: 0 });
    const text = (await run('show', String(join))).stdout;
    expect(text).toMatch(/^waiting for: +2 parent\(s\) to end$/m);
    expect(text).toMatch(/^key scope: +incomplete: free again once the job has ended$/m);
    expect(text).toMatch(/^key expires: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in 59m\d\ds\)$/m);
    expect(text).toMatch(/^parents \(it runs even if one ends FAILED or CANCELLED\)\nID +CLASS +STATUS +ERROR$/m);
    expect(text).toMatch(new RegExp(`^ *${a} +part +WAITING +-$`, 'm'));
    expect(text).not.toMatch(/^children$/m);
    expect(await show(root.id)).toMatchObject({
      parents: [],
      children: [
        { id: a, status: 'WAITING' },
        { id: b, status: 'WAITING' },
      ],
      more_children: 0,
    });
    expect((await run('show', String(a))).stdout).toMatch(
      /^parents \(it is cancelled if one ends FAILED or CANCELLED\)$/m,
    );

    const stats = await json<StatsJson>('stats');
    expect(stats.jobs.total).toMatchObject({ WAITING: 3, QUEUED: 1, total: 4 });
    expect(stats.jobs.by_class.map((row) => [row.class, row.WAITING, row.QUEUED])).toEqual([
      ['fetch', 0, 1],
      ['join', 1, 0],
      ['part', 2, 0],
    ]);
    const table = (await run('stats')).stdout.split('\n');
    expect(table[1]).toMatch(/^CLASS +WAITING +QUEUED +CLAIMED +RUNNING +SUCCEEDED +FAILED +CANCELLED +TOTAL$/);
    expect(table.find((line) => line.startsWith('all '))).toMatch(/^all +3 +1 +0 +0 +0 +0 +0 +4$/);

    // the key is held while its job has not ended
    expect(await enqueue('join', '--key', 'join-1')).toEqual({ id: join, created: false });
    expect((await run('enqueue', '--allow-unknown-class', 'join', '--key', 'join-1')).stdout.trim()).toBe(
      `job ${join} already holds key "join-1" (not created)`,
    );

    // an operator cancels the root: its dependents are cancelled, but the fan-in runs anyway
    expect(await json('cancel', String(root.id))).toMatchObject({ outcome: 'cancelled', status: 'CANCELLED' });
    const part = await show(a);
    expect(part.job).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:CANCELLED', pending_parents: 0 });
    expect(part.parents).toEqual([{ id: root.id, class: 'fetch', status: 'CANCELLED', error_code: null }]);
    expect(part.events.map((e) => [e.event, e.actor, e.detail])).toEqual([
      ['ENQUEUED', 'cli', expect.anything()],
      ['CANCELLED', 'flow', { code: 'DEPENDENCY:CANCELLED', parent: root.id }],
    ]);
    const ran = await show(join);
    expect(ran.job).toMatchObject({ status: 'QUEUED', pending_parents: 0 });
    expect(ran.parents.map((p) => [p.id, p.status, p.error_code])).toEqual([
      [a, 'CANCELLED', 'DEPENDENCY:CANCELLED'],
      [b, 'CANCELLED', 'DEPENDENCY:CANCELLED'],
    ]);
    expect((await run('show', String(join))).stdout).not.toMatch(/^waiting for:/m);
    expect((await json<{ jobs: JobJson[] }>('list', '--status', 'WAITING')).jobs).toEqual([]);

    // a job whose parent already ended CANCELLED is born cancelled, unless it runs anyway
    const late = await enqueue('tail', '--depends-on', `${a},${join}`);
    expect((await show(late.id)).job).toMatchObject({ status: 'CANCELLED', error_code: 'DEPENDENCY:CANCELLED' });
    const anyway = await enqueue(
      'tail',
      '--depends-on',
      String(a),
      '--depends-on',
      String(join),
      '--on-parent-failure',
      'run',
    );
    expect(await show(anyway.id)).toMatchObject({
      job: { status: 'WAITING', pending_parents: 1 },
      parents: [
        { id: a, status: 'CANCELLED' },
        { id: join, status: 'QUEUED' },
      ],
    });
    expect((await json<StatsJson>('stats')).jobs.total).toMatchObject({ WAITING: 1, QUEUED: 1, CANCELLED: 4 });
  });

  it('a bulk file past one transaction: refs across its chunks, and the first 50 children of a job and how many more', async () => {
    const { run, json, show, file } = await cli(database());
    const CHILDREN = 53;
    const CHAIN = 1_000;
    const lines = [
      { class: 'hub', ref: 'hub' },
      ...Array.from({ length: CHILDREN }, () => ({ class: 'spoke', depends_on: ['hub'] })),
      { class: 'chain', ref: 'c0' },
      ...Array.from({ length: CHAIN }, (_, n) => ({ class: 'chain', ref: `c${n + 1}`, depends_on: [`c${n}`] })),
    ];
    const { ids } = await json<{ ids: number[] }>('enqueue', '--allow-unknown-class', '--file', file(lines));
    expect(ids).toHaveLength(lines.length);
    // the first line of the second transaction (1,000 lines each), its parent in the first, and the line after it
    for (const at of [999, 1_000, 1_001, lines.length - 1])
      expect(
        (await show(ids[at]!)).parents.map((p) => p.id),
        `line ${at + 1}`,
      ).toEqual([ids[at - 1]]);
    expect((await json<{ jobs: JobJson[] }>('list', '--status', 'WAITING', '--class', 'chain')).jobs).toHaveLength(20);

    const hub = await show(ids[0]!);
    expect(hub.children.map((c) => c.id)).toEqual(ids.slice(1, 51));
    expect(hub.more_children).toBe(CHILDREN - 50);
    const text = (await run('show', String(ids[0]))).stdout;
    expect(text).toMatch(new RegExp(`^ *${ids[50]} +spoke +WAITING +-\\n… and 3 more$`, 'm'));
  });
});
