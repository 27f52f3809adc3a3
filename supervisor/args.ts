/**
 * supervise's command line: `--config <file> [--check-config] [--watch]`. A plain one
 * is read by Node's parseArgs; anything else (`--help`, `--version`, a
 * mistake, a spelling yargs also takes) goes to yargs, loaded only then,
 * which words the errors: loading yargs was a sixth of a supervisor's start.
 */
import { parseArgs } from 'node:util';
import { EXIT } from '../src/exit.js';
import { packageVersion } from '../src/package-version.js';

export interface SuperviseArgs {
  config: string;
  'check-config': boolean;
  watch: boolean;
}

const PROGRAM = 'supervise';

export async function superviseArgs(argv: readonly string[]): Promise<SuperviseArgs> {
  return plainArgs(argv) ?? yargsArgs(argv);
}

/** The line read as yargs would read it, when it is plain; undefined when yargs must say. */
export function plainArgs(argv: readonly string[]): SuperviseArgs | undefined {
  try {
    const { values, tokens } = parseArgs({
      args: [...argv],
      options: { config: { type: 'string' }, 'check-config': { type: 'boolean' }, watch: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
      tokens: true,
    });
    const names = tokens.filter((token) => token.kind === 'option').map((token) => token.name);
    if (new Set(names).size !== names.length || values.config === undefined || values.config === '') return undefined;
    return { config: values.config, 'check-config': values['check-config'] ?? false, watch: values.watch ?? false };
  } catch {
    return undefined;
  }
}

export async function yargsArgs(argv: readonly string[]): Promise<SuperviseArgs> {
  const { default: yargs } = await import('yargs');
  return yargs([...argv])
    .scriptName(PROGRAM)
    .usage(
      '$0 --config queue.yaml\n\nRuns the supervisor and its child workers in the foreground. SIGTERM or SIGINT drains; a second signal forces. SIGHUP reloads queue.yaml.',
    )
    .option('config', { type: 'string', demandOption: true, describe: 'path of queue.yaml' })
    .option('check-config', { type: 'boolean', default: false, describe: 'validate the config and exit' })
    .option('watch', {
      type: 'boolean',
      default: false,
      describe: "replace a class's children when its handler or middleware files change (development)",
    })
    .strict()
    .fail((message, error) => {
      process.stderr.write(`${PROGRAM}: ${message ?? error?.message}\n`);
      process.exit(EXIT.USAGE);
    })
    .help()
    .version(packageVersion())
    .parseAsync();
}
