/**
 * One BullMQ worker process for the peers beside section 1:
 * `node bench/dist/bullmq-worker.js <port> <concurrency>`. It runs
 * BullMQ's Worker on the `bench` queue of the Redis server at 127.0.0.1:<port>
 * with a no-op processor until SIGTERM.
 */
import { Worker } from 'bullmq';

const [port, concurrency] = process.argv.slice(2).map(Number);
if (port === undefined || concurrency === undefined || !Number.isInteger(port) || !Number.isInteger(concurrency)) {
  process.stderr.write('usage: bullmq-worker <port> <concurrency>\n');
  process.exit(2);
}

// maxRetriesPerRequest null: what BullMQ asks of a worker's connection.
const worker = new Worker('bench', async () => {}, {
  connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
  concurrency,
});
worker.on('error', (error) => process.stderr.write(`bullmq worker: ${String(error)}\n`));

process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
