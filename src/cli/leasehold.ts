#!/usr/bin/env node
/** `leasehold --config queue.yaml <command>` (or `--db PATH`): the operator's and producer's command line. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { cancelCommand } from './commands/cancel.js';
import { enqueueCommand } from './commands/enqueue.js';
import { listCommand } from './commands/list.js';
import { migrateCommand } from './commands/migrate.js';
import { pauseCommand, resumeCommand } from './commands/pause.js';
import { pruneCommand } from './commands/prune.js';
import { retryCommand } from './commands/retry.js';
import { showCommand } from './commands/show.js';
import { statsCommand } from './commands/stats.js';
import { sweepCommand } from './commands/sweep.js';
import { workersCommand } from './commands/workers.js';
import { PROGRAM, STDIN_TOKEN, type GlobalArgs } from './context.js';
import { EXIT } from '../exit.js';

await yargs(hideBin(process.argv).map((arg) => (arg === '-' ? STDIN_TOKEN : arg)))
  .scriptName(PROGRAM)
  .usage('$0 (--config queue.yaml | --db PATH) <command> [options]')
  .option('config', { type: 'string', global: true, describe: 'queue.yaml: the database, class list, limits and retention policy' })
  .option('db', { type: 'string', global: true, describe: 'the database (wins over the config\'s)' })
  .option('json', { type: 'boolean', default: false, global: true, describe: 'print one JSON document' })
  .command(enqueueCommand)
  .command(showCommand)
  .command(listCommand)
  .command(statsCommand)
  .command(workersCommand)
  .command(cancelCommand)
  .command(retryCommand)
  .command(pauseCommand)
  .command(resumeCommand)
  .command(pruneCommand)
  .command(sweepCommand)
  .command(migrateCommand)
  .demandCommand(1, 'give a command: enqueue, show, list, stats, workers, cancel, retry, pause, resume, prune, sweep or migrate')
  .strict()
  .strictCommands()
  .fail((message: string | undefined, error: Error | undefined) => {
    // yargs' own messages can span lines: the contract is one line on stderr.
    process.stderr.write(`${PROGRAM}: ${(message ?? error?.message ?? 'bad usage').replace(/\s*\n\s*/g, ' ')}\n`);
    process.exit(EXIT.USAGE);
  })
  .help()
  .version(false)
  .wrap(null)
  .parseAsync() as unknown as Promise<GlobalArgs>;
