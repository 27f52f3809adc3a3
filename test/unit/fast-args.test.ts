/**
 * The CLI's fast path (fastArgs, no yargs) must hand every command the same
 * arguments yargs would, or decline and leave the words to yargs. Each
 * command's own tables are parsed both ways over a spread of command lines.
 */
import yargs, { type Options } from 'yargs';
import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS, STDIN_TOKEN, type Command } from '../../src/cli/context.js';
import { fastArgs } from '../../src/cli/fast-args.js';
import { cancelCommand } from '../../src/cli/commands/cancel.js';
import { dashboardCommand } from '../../src/cli/commands/dashboard.js';
import { enqueueCommand } from '../../src/cli/commands/enqueue.js';
import { listCommand } from '../../src/cli/commands/list.js';
import { migrateCommand } from '../../src/cli/commands/migrate.js';
import { pauseCommand, resumeCommand } from '../../src/cli/commands/pause.js';
import { pruneCommand } from '../../src/cli/commands/prune.js';
import { reloadCommand } from '../../src/cli/commands/reload.js';
import { retryCommand } from '../../src/cli/commands/retry.js';
import { schedulesCommand } from '../../src/cli/commands/schedules.js';
import { showCommand } from '../../src/cli/commands/show.js';
import { statsCommand } from '../../src/cli/commands/stats.js';
import { sweepCommand } from '../../src/cli/commands/sweep.js';
import { workersCommand } from '../../src/cli/commands/workers.js';

const COMMANDS: Command[] = [
  cancelCommand,
  dashboardCommand,
  enqueueCommand,
  listCommand,
  migrateCommand,
  pauseCommand,
  resumeCommand,
  pruneCommand,
  reloadCommand,
  retryCommand,
  schedulesCommand,
  showCommand,
  statsCommand,
  sweepCommand,
  workersCommand,
];

/** One yargs parser a command, which hands what its handler gets to `captured`: built once, it parses each line afresh. */
const parsers = new Map<Command, { parse: (argv: string[]) => Promise<unknown>; captured?: Record<string, unknown> }>();

function parserFor(command: Command) {
  let parser = parsers.get(command);
  if (parser !== undefined) return parser;
  const instance = yargs()
    .scriptName('leasehold')
    .options(GLOBAL_OPTIONS)
    .command({ ...command, handler: (args: Record<string, unknown>) => void (built.captured = args) } as never)
    .strict()
    .strictCommands()
    .fail((message: string | undefined, error: Error | undefined) => {
      throw error ?? new Error(message);
    })
    .help(false)
    .version(false);
  const built: { parse: (argv: string[]) => Promise<unknown>; captured?: Record<string, unknown> } = {
    parse: (argv) => instance.parseAsync(argv),
  };
  parser = built;
  parsers.set(command, parser);
  return parser;
}

/** What yargs hands the command's handler, or 'refused' when it fails the words. Values left undefined are dropped. */
async function viaYargs(argv: string[], command: Command): Promise<Record<string, unknown> | 'refused'> {
  const parser = parserFor(command);
  parser.captured = undefined;
  try {
    await parser.parse(argv);
  } catch {
    return 'refused';
  }
  return parser.captured === undefined ? 'refused' : defined(parser.captured);
}

function defined(args: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));
}

/** Command lines for one command: its positionals, then each option in each spelling, with odd values too ('-' as the entry point passes it on). */
function commandLines(command: Command): string[][] {
  const { spec } = command;
  const [name, ...words] = spec.command.split(/\s+/);
  const required = words.filter((word) => word.startsWith('<')).map(() => '7');
  const all = words.map((_, i) => (i === 0 ? 'email' : '-'));
  const bases = [[name!, ...required], [name!, ...all], [name!]];
  const strings = ['x', '', '{"a":1}', '-', 'true'];
  const numbers = ['5', '1.5', 'abc', '', '0x10', '-1', '1e3'];
  const lines: string[][] = [];
  for (const base of bases) {
    lines.push(
      base,
      [...base, '--json'],
      ['--db', '/tmp/q.db', ...base, '--json', 'false'],
      [...base, 'extra'],
      [...base, '--help'],
      [...base, '--nope'],
    );
    for (const [option, table] of Object.entries<Options>({ ...GLOBAL_OPTIONS, ...spec.options })) {
      const type = String(table.type);
      if (type === 'boolean')
        lines.push(
          [...base, `--${option}`],
          [...base, `--no-${option}`],
          [...base, `--${option}`, 'true'],
          [...base, `--${option}=false`],
        );
      // A numeric option is a string that its coerce parses (numeric-options.ts).
      const values = type === 'boolean' ? [] : table.coerce === undefined ? strings : [...strings, ...numbers];
      for (const value of values)
        lines.push(
          [...base, `--${option}`, value],
          [...base, `--${option}=${value}`],
          [...base, `--${option}`, value, `--${option}`, value],
        );
    }
  }
  // As the entry point hands them to either parser.
  return lines.map((line) => line.map((word) => (word === '-' ? STDIN_TOKEN : word)));
}

describe('fastArgs', () => {
  it('agrees with yargs on every command line it takes, and takes the plain ones', async () => {
    let taken = 0;
    for (const command of COMMANDS) {
      for (const argv of commandLines(command)) {
        const fast = fastArgs(argv, command.spec, GLOBAL_OPTIONS);
        if (fast === undefined) continue;
        taken += 1;
        expect({ argv, args: defined(fast) }).toEqual({ argv, args: await viaYargs(argv, command) });
      }
      expect(
        fastArgs(
          [
            command.spec.command.split(' ')[0]!,
            ...command.spec.command
              .split(/\s+/)
              .slice(1)
              .filter((w) => w.startsWith('<'))
              .map(() => '7'),
          ],
          command.spec,
          GLOBAL_OPTIONS,
        ),
        command.spec.command,
      ).toBeDefined();
    }
    console.log(`fastArgs took ${taken} command lines, each as yargs parses it`);
    expect(taken).toBeGreaterThan(200);
  });

  it('no command has a yargs number option, which reads "abc" as NaN', () => {
    const numbers = COMMANDS.flatMap((command) =>
      Object.entries(command.spec.options ?? {})
        .filter(([, table]) => table.type === 'number')
        .map(([option]) => `${command.spec.command} --${option}`),
    );
    expect(numbers).toEqual([]);
  });

  it('leaves help, unknown, repeated and negated options, stray positionals, dash-led values and bad numbers to yargs', () => {
    const cases = [
      ['stats', '--help'],
      ['stats', '--nope'],
      ['stats', '--limit', '5', '--limit', '6'],
      ['stats', '--no-json'],
      ['show'],
      ['show', '1', '2'],
      ['list', '--limit', '-1'],
      ['list', '--limit', 'abc'],
      ['list', '--limit'],
      ['stats', '--json', 'true'],
      ['stats', '--', 'x'],
    ];
    for (const argv of cases) {
      const command = COMMANDS.find((c) => c.spec.command.split(' ')[0] === argv[0])!;
      expect(fastArgs(argv, command.spec, GLOBAL_OPTIONS), argv.join(' ')).toBeUndefined();
    }
  });
});
