/**
 * One process of the floor loop (section 24's floor arms):
 * `node bench/dist/floor-worker.js <connection> <schema> <index> <timeline: 0 or 1>`.
 * It runs floorLoop until the queue is empty, then exits 0.
 */
import pg from 'pg';
import { floorLoop } from './floor-loop.js';

const [connectionString, schema, index, timeline] = process.argv.slice(2);
if (
  connectionString === undefined ||
  schema === undefined ||
  !Number.isInteger(Number(index)) ||
  (timeline !== '0' && timeline !== '1')
) {
  process.stderr.write('usage: floor-worker <connection> <schema> <index> <timeline: 0 or 1>\n');
  process.exit(2);
}
const client = new pg.Client({ connectionString });
await client.connect();
await client.query(`SET search_path TO ${pg.escapeIdentifier(schema)}`);
await floorLoop(client, Number(index), timeline === '1');
await client.end();
