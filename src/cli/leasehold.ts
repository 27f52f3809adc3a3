#!/usr/bin/env node
/** `leasehold --config queue.yaml <command>` (or `--db PATH`): the operator's and producer's command line. */
import { parseArgs } from 'node:util';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { PROGRAM, STDIN_TOKEN, type Command } from './context.js';
import { EXIT } from '../exit.js';

type LoadCommand = () => Promise<Command>;

// A command is one line here (name: the import of its module); only the module of the command that runs is loaded.
const COMMANDS: Record<string, LoadCommand> = {
  enqueue: async () => (await import('./commands/enqueue.js')).enqueueCommand,
  show: async () => (await import('./commands/show.js')).showCommand,
  list: async () => (await import('./commands/list.js')).listCommand,
  stats: async () => (await import('./commands/stats.js')).statsCommand,
  workers: async () => (await import('./commands/workers.js')).workersCommand,
  schedules: async () => (await import('./commands/schedules.js')).schedulesCommand,
  cancel: async () => (await import('./commands/cancel.js')).cancelCommand,
  retry: async () => (await import('./commands/retry.js')).retryCommand,
  pause: async () => (await import('./commands/pause.js')).pauseCommand,
  resume: async () => (await import('./commands/pause.js')).resumeCommand,
  prune: async () => (await import('./commands/prune.js')).pruneCommand,
  sweep: async () => (await import('./commands/sweep.js')).sweepCommand,
  migrate: async () => (await import('./commands/migrate.js')).migrateCommand,
  reload: async () => (await import('./commands/reload.js')).reloadCommand,
};

/**
 * The command the arguments name, when their first word is one: only it is
 * loaded. Anything else (no command, --help, a typo) loads them all, and
 * yargs answers as it always did.
 */
function namedCommand(args: string[]): LoadCommand[] {
  const globals = { config: { type: 'string' }, db: { type: 'string' } } as const;
  const [first] = parseArgs({ args, options: globals, strict: false, allowPositionals: true }).positionals;
  const load = first === undefined || !Object.hasOwn(COMMANDS, first) ? undefined : COMMANDS[first];
  return load === undefined ? Object.values(COMMANDS) : [load];
}

const names = Object.keys(COMMANDS);
const args = hideBin(process.argv);
const cli = yargs(args.map((arg) => (arg === '-' ? STDIN_TOKEN : arg)))
  .scriptName(PROGRAM)
  .usage('$0 (--config queue.yaml | --db PATH) <command> [options]')
  .option('config', { type: 'string', global: true, describe: 'queue.yaml: the database, class list, limits and retention policy' })
  .option('db', { type: 'string', global: true, describe: 'the database (wins over the config\'s)' })
  .option('json', { type: 'boolean', default: false, global: true, describe: 'print one JSON document' });
for (const command of await Promise.all(namedCommand(args).map((load) => load()))) cli.command(command);
await cli
  .demandCommand(1, `give a command: ${names.slice(0, -1).join(', ')} or ${names.at(-1)}`)
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
  .parseAsync();
