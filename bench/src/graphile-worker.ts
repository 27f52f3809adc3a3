/**
 * One graphile-worker process for the peers beside section 9:
 * `node bench/dist/graphile-worker.js <connection> <schema> <concurrency> <local queue size>`.
 * It runs graphile-worker's pool on the `bench` task with a no-op executor
 * until SIGTERM. A local queue size above 0 is the batching of its
 * performance page: that many jobs fetched and locked at once, completions
 * batched (completeJobBatchDelay and failJobBatchDelay 0).
 */
import { Logger, run } from 'graphile-worker';

const [connectionString, schema, ...numbers] = process.argv.slice(2);
const [concurrency, localQueueSize] = numbers.map(Number);
if (
  connectionString === undefined ||
  schema === undefined ||
  concurrency === undefined ||
  localQueueSize === undefined ||
  !Number.isInteger(concurrency) ||
  !Number.isInteger(localQueueSize)
) {
  process.stderr.write('usage: graphile-worker <connection> <schema> <concurrency> <local queue size>\n');
  process.exit(2);
}

// Errors only: it logs every job at debug level otherwise.
const logger = new Logger(() => (level, message) => {
  if (String(level) === 'error') process.stderr.write(`${message}\n`);
});
const batching = { worker: { localQueue: { size: localQueueSize }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } };
const runner = await run({
  connectionString,
  schema,
  concurrency,
  logger,
  noHandleSignals: true,
  taskList: { bench: async () => {} },
  ...(localQueueSize > 0 ? { preset: batching } : {}),
});

process.once('SIGTERM', () => {
  void runner.stop().then(() => process.exit(0));
});
