import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IN_INDEX } from '../../src/store/postgres/connection.js';
import { STATS_SQL } from '../../src/store/postgres/sql/stats.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { Queue } from '../../src/queue/queue.js';
import { adminClient, pgUrl, schemaPool } from '../helpers/postgres.js';

const schemas = schemaPool('lh_dead');
/** A drained burst: every job claimed and ended, each change leaving its row's earlier version dead. */
const BURST = 20_000;

/** EXPLAIN (ANALYZE, BUFFERS) of a read as the store runs it: a generic plan, with `settings`. */
async function explained(
  client: pg.Client,
  sql: { text: string },
  values: unknown[],
  settings = '',
): Promise<PlanNode> {
  await client.query('BEGIN');
  try {
    await client.query(`SET LOCAL plan_cache_mode = force_generic_plan; ${settings}`);
    await client.query(`PREPARE q AS ${sql.text}`);
    const args = values.length === 0 ? '' : `(${values.map((value) => pg.escapeLiteral(String(value))).join(', ')})`;
    const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE q${args}`);
    return (rows[0] as { 'QUERY PLAN': { Plan: PlanNode }[] })['QUERY PLAN'][0]!.Plan;
  } finally {
    await client.query('ROLLBACK');
    await client.query('DEALLOCATE ALL');
  }
}

interface PlanNode {
  'Node Type': string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: PlanNode[];
}

const nodeTypes = (node: PlanNode): string[] => [node['Node Type'], ...(node.Plans ?? []).flatMap(nodeTypes)];

// Until autovacuum comes by (a minute, at its default naptime), a burst's dead row versions stay in the table and
// their entries in the indexes; the reads an operator and the supervisor poll must not visit each of them every time.
describe('PostgreSQL reads right after a burst, before a vacuum', () => {
  const schema = schemas.next();
  let store: PostgresStore;
  let client: pg.Client;

  beforeAll(async () => {
    store = await PostgresStore.open({ database: pgUrl(schema) });
    client = await adminClient(schema);
    await client.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
    const queue = new Queue(store);
    for (let start = 0; start < BURST; start += 10_000)
      await queue.enqueueMany(Array.from({ length: 10_000 }, () => ({ class: 'email' })));
    // The row versions a claim and a success write (the statements' own columns), as the settle leaves them.
    await client.query(
      `UPDATE jobs SET status = 'CLAIMED', owner_id = 'w1', lease_token = md5(id::text), claimed_at = run_at,
         lease_expires_at = run_at + 30000, attempts = 1`,
    );
    await client.query(`UPDATE jobs SET status = 'SUCCEEDED', finished_at = run_at + 1, lease_expires_at = NULL`);
  });
  afterAll(async () => {
    await client?.end();
    await store?.close();
  });

  it('the in-flight jobs are read through a plain index scan, which marks the dead entries it passes', async () => {
    // A bitmap scan never marks them: it visited every dead in-flight version's row again at each read. (How many
    // blocks a plain scan skips the next time is not asserted: a transaction of any other test in the database holds
    // the dead versions visible, and then they are not marked.)
    const plan = await explained(client, STATS_SQL.inFlightOldest, [10], IN_INDEX);
    expect(nodeTypes(plan)).toContain('Index Scan');
    expect(nodeTypes(plan).filter((type) => type.startsWith('Bitmap'))).toEqual([]);
    expect(await store.statsInFlight({ limit: 10 })).toEqual([]);
  });

  it('the classes present are found without walking the dead entries of the statuses a job passed through', async () => {
    const plan = await explained(client, STATS_SQL.classesPresent, []);
    expect(plan['Shared Hit Blocks'] + plan['Shared Read Blocks']).toBeLessThan(BURST / 500);
    expect(await store.statsCounts()).toEqual([{ class: 'email', status: 'SUCCEEDED', count: BURST }]);
  });
});
