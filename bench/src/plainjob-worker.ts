/**
 * One plainjob worker process for the comparison (section 2):
 * `node bench/dist/plainjob-worker.js <database>`. It runs plainjob's
 * own worker loop on the `bench` type with a no-op processor until SIGTERM.
 * plainjob logs every job at debug level to its logger (console by default);
 * it gets a silent one, as leasehold's supervisor logs at info level here.
 */
import Database from 'better-sqlite3';
import { better, defineQueue, defineWorker, type Logger } from 'plainjob';

const database = process.argv[2];
if (database === undefined) {
  process.stderr.write('usage: plainjob-worker <database>\n');
  process.exit(2);
}

const silent: Logger = {
  error: (message) => process.stderr.write(`${message}\n`),
  warn: () => {},
  info: () => {},
  debug: () => {},
};
const queue = defineQueue({ connection: better(new Database(database)), logger: silent });
const worker = defineWorker('bench', async () => {}, { queue, logger: silent });

process.once('SIGTERM', () => {
  void worker.stop().then(() => {
    queue.close();
    process.exit(0);
  });
});

void worker.start().catch((error: unknown) => {
  process.stderr.write(`plainjob worker failed: ${String(error)}\n`);
  process.exit(1);
});
