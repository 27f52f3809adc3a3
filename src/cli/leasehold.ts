#!/usr/bin/env node
/** `leasehold --config queue.yaml <command>` (or `--db PATH`): the operator's and producer's command line. */
import { parseArgs } from 'node:util';
import { GLOBAL_OPTIONS, PROGRAM, STDIN_TOKEN, type Command } from './context.js';
import { fastArgs } from './fast-args.js';
import { EXIT } from '../exit.js';

type LoadCommand = () => Promise<Command>;

// A command is one line here (name: the import of its module); only the module of the command that runs is loaded, and yargs only when fastArgs declines.
const COMMANDS: Record<string, LoadCommand> = {
  enqueue: async () => (await import('./commands/enqueue.js')).enqueueCommand,
  show: async () => (await import('./commands/show.js')).showCommand,
  logs: async () => (await import('./commands/logs.js')).logsCommand,
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
  dashboard: async () => (await import('./commands/dashboard.js')).dashboardCommand,
};

/** The command the arguments name, when their first word is one. */
function namedCommand(args: string[]): LoadCommand | undefined {
  const globals = { config: { type: 'string' }, db: { type: 'string' } } as const;
  const [first] = parseArgs({ args, options: globals, strict: false, allowPositionals: true }).positionals;
  return first === undefined || !Object.hasOwn(COMMANDS, first) ? undefined : COMMANDS[first];
}

/** yargs: for what the fast path leaves (help, no command, a typo, bad or unusual arguments), with every command loaded unless one was named. */
async function runYargs(args: string[], commands: Command[]): Promise<void> {
  const { default: yargs } = await import('yargs');
  // Read from package.json only here: the fast path never prints the version.
  const { packageVersion } = await import('../package-version.js');
  const names = Object.keys(COMMANDS);
  const cli = yargs(args)
    .scriptName(PROGRAM)
    .usage('$0 (--config queue.yaml | --db PATH) <command> [options]')
    .options(GLOBAL_OPTIONS);
  for (const command of commands) cli.command(command);
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
    .version(packageVersion())
    .wrap(null)
    .parseAsync();
}

const args = process.argv.slice(2).map((arg) => (arg === '-' ? STDIN_TOKEN : arg));
const load = namedCommand(args);
const named = await load?.();
const fast = named === undefined ? undefined : fastArgs(args, named.spec, GLOBAL_OPTIONS);
if (named !== undefined && fast !== undefined) await named.handler(fast as Parameters<Command['handler']>[0]);
else
  await runYargs(
    args,
    named !== undefined ? [named] : await Promise.all(Object.values(COMMANDS).map((loadOne) => loadOne())),
  );
