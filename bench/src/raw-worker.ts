/**
 * The raw ceiling (sections 3 and 9):
 * `node bench/dist/raw-worker.js <sqlite|postgres> <database> <per-tx> [bookkeeping]`
 * drains the queue with raw-queue.ts's loop and exits.
 */
import { drainRaw, postgresQueue, sqliteQueue } from './raw-queue.js';

const [driver, database, perTxText, mode] = process.argv.slice(2);
const perTx = Number(perTxText);
const bookkeeping = mode === 'bookkeeping';
if (
  (driver !== 'sqlite' && driver !== 'postgres') ||
  database === undefined ||
  !Number.isInteger(perTx) ||
  perTx < 1 ||
  (mode !== undefined && !(bookkeeping && driver === 'sqlite'))
) {
  process.stderr.write('usage: raw-worker <sqlite|postgres> <database> <per-tx> [bookkeeping (sqlite)]\n');
  process.exit(2);
}

const queue = driver === 'sqlite' ? sqliteQueue(database, perTx, bookkeeping) : await postgresQueue(database, perTx);
await drainRaw(queue);
await queue.close();
