/**
 * What every `leasehold` command shares: the global options, the config and
 * database they name, opening the store, the `--json` switch, and turning
 * errors into one stderr line and an exit code.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Argv, CommandModule, Options, PositionalOptions } from 'yargs';
import type { Clock } from '../clock.js';
import type { ClassConfig, LeaseholdConfig } from '../config/schema.js';
import { InvalidInputError } from '../errors.js';
import { isPostgresUrl } from '../store/database-url.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { die } from '../exit.js';

export const PROGRAM = 'leasehold';
/** Recorded as the actor of what the command line writes (ENQUEUED, CANCELLED, RETRY_SCHEDULED events). */
export const CLI_ACTOR = 'cli';

/**
 * yargs reads a lone "-" argument as an empty string; the entry point swaps it
 * for this token first (no shell can pass a NUL), and `isStdin` knows both.
 */
export const STDIN_TOKEN = '\u0000-';

export function isStdin(value: string | undefined): boolean {
  return value === STDIN_TOKEN || value === '-';
}

/** The options of every command. */
export const GLOBAL_OPTIONS = {
  config: {
    type: 'string',
    global: true,
    describe: 'queue.yaml: the database, class list, limits and retention policy',
  },
  db: { type: 'string', global: true, describe: "the database (wins over the config's)" },
  json: { type: 'boolean', default: false, global: true, describe: 'print one JSON document' },
} satisfies Record<string, Options>;

export interface GlobalArgs {
  config?: string;
  db?: string;
  json: boolean;
}

/** The config (when --config was given) and the database the command works on. */
export interface Target {
  config: LeaseholdConfig | undefined;
  /** An absolute SQLite path, or a postgres:// URL. */
  database: string;
}

export interface Context extends Target {
  store: Store;
  clock: Clock;
  json: boolean;
  /** True when this command created the database file. */
  created: boolean;
}

/**
 * --db wins for the database; --config still gives the class list, limits and
 * policies. Neither: exit 2. A bad config: exit 2 naming the file and field.
 * The config's parser (yaml, zod) is loaded only when there is a config to read.
 */
export async function resolveTarget(args: GlobalArgs, loaded?: LeaseholdConfig): Promise<Target> {
  if (args.config === undefined && args.db === undefined) {
    throw new InvalidInputError('USAGE', 'give --config queue.yaml or --db PATH');
  }
  if (args.db !== undefined && args.db.trim() === '')
    throw new InvalidInputError('DATABASE', '--db must be a file path');
  // `loaded`: --config's file, already read and checked by the command.
  const config =
    loaded ?? (args.config === undefined ? undefined : (await import('../config/load.js')).loadConfig(args.config));
  const database = args.db !== undefined ? absoluteDatabase(args.db) : (config as LeaseholdConfig).database;
  return { config, database };
}

function absoluteDatabase(database: string): string {
  return isPostgresUrl(database) || database === ':memory:' ? database : path.resolve(database);
}

/**
 * Open the store. Every command but `migrate` (`create: false`) never
 * creates a database or leasehold's tables: a missing file, a file or a
 * PostgreSQL schema without them, is bad input. A file that cannot be
 * opened is bad input too (exit 2), with the reason.
 */
export async function openContext(target: Target, args: GlobalArgs, { create }: { create: boolean }): Promise<Context> {
  const { database } = target;
  const isFile = !isPostgresUrl(database) && database !== ':memory:';
  const existed = isFile && existsSync(database);
  if (isFile && !existed && !create) throw new InvalidInputError('DATABASE', `no database at ${database}`);
  let store: Store;
  try {
    store = await openStore(database, { create });
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    if (isOpenError(error))
      throw new InvalidInputError('DATABASE', `cannot open the database at ${database}: ${(error as Error).message}`);
    throw error;
  }
  return { ...target, store, clock: store.clock, json: args.json, created: isFile && !existed };
}

/** Errors that say the path is wrong (missing folder, no permission, not a database), not that something broke. */
function isOpenError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    [
      'ENOENT',
      'EACCES',
      'EPERM',
      'EROFS',
      'ENOTDIR',
      'EISDIR',
      'EEXIST',
      'SQLITE_CANTOPEN',
      'SQLITE_NOTADB',
      'SQLITE_READONLY',
      'SQLITE_PERM',
    ].includes(code)
  );
}

/** Open, do the work, close; the store is closed before any error reaches the exit handler. */
export async function withStore<T>(
  target: Target,
  args: GlobalArgs,
  options: { create: boolean },
  work: (ctx: Context) => Promise<T>,
): Promise<T> {
  const ctx = await openContext(target, args, options);
  try {
    return await work(ctx);
  } finally {
    await ctx.store.close();
  }
}

export interface JobArgs extends GlobalArgs {
  id: string;
}

/** The `<id>` argument of the commands that act on one job. */
export const JOB_ID_ARG: PositionalOptions = { type: 'string', describe: 'job id' };

export interface CommandSpec<A extends GlobalArgs> {
  command: string;
  describe: string;
  /** The positional arguments that `command` names, in its order. */
  positionals?: Record<string, PositionalOptions>;
  options?: Record<string, Options>;
  run: (args: A) => Promise<void>;
}

/** A command as the entry point registers it: every command has this one type, whatever its arguments; `spec` is its tables. */
export interface Command extends CommandModule<GlobalArgs, GlobalArgs> {
  readonly spec: CommandSpec<GlobalArgs>;
}

/**
 * A yargs command from tables of its arguments; `run` ends as `action` says on
 * error. yargs cannot infer A from tables, so the casts take the spec's A as the contract.
 */
export function defineCommand<A extends GlobalArgs>(spec: CommandSpec<A>): Command {
  return {
    command: spec.command,
    describe: spec.describe,
    builder: (yargs: Argv<GlobalArgs>) => {
      for (const [name, positional] of Object.entries(spec.positionals ?? {})) yargs.positional(name, positional);
      return yargs.options(spec.options ?? {}) as unknown as Argv<GlobalArgs>;
    },
    handler: action(spec.run) as unknown as Command['handler'],
    spec: spec as unknown as CommandSpec<GlobalArgs>,
  };
}

/**
 * A command on the one job its `<id>` names. The id is checked before the
 * database (which must exist) is opened, so a bad id touches nothing.
 */
export function defineJobCommand<A extends JobArgs = JobArgs>(spec: {
  command: string;
  describe: string;
  options?: Record<string, Options>;
  run: (id: number, ctx: Context, args: A) => Promise<void>;
}): Command {
  return defineCommand<A>({
    command: spec.command,
    describe: spec.describe,
    positionals: { id: JOB_ID_ARG },
    options: spec.options,
    run: async (args) => {
      const id = parseId(args.id);
      await withExistingStore(args, (ctx) => spec.run(id, ctx, args));
    },
  });
}

/** Open the database the arguments name, which must exist already, for `work`. */
export async function withExistingStore<T>(args: GlobalArgs, work: (ctx: Context) => Promise<T>): Promise<T> {
  return withStore(await resolveTarget(args), args, { create: false }, work);
}

/** A yargs handler that ends in one stderr line and exit code 2 (bad input) or 1 (anything else) on error. */
export function action<A>(work: (args: A) => Promise<void>): (args: A) => Promise<void> {
  return async (args: A) => {
    try {
      await work(args);
    } catch (error) {
      die(error, PROGRAM);
    }
  };
}

/** `--json` prints the value as one JSON document; otherwise the human text. */
export function output(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
}

/** A job id: a positive integer written in decimal, nothing else. */
export function parseId(raw: unknown): number {
  const text = String(raw ?? '').trim();
  const id = /^[1-9][0-9]*$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id))
    throw new InvalidInputError('ID', `job id must be a positive integer, got ${JSON.stringify(String(raw ?? ''))}`);
  return id;
}

export function classConfig(config: LeaseholdConfig | undefined, name: string): ClassConfig | undefined {
  return config?.classes.find((cls) => cls.name === name);
}

/**
 * The one line for a class the command refuses: not in the config, or no
 * config to check it against. `option` names the option that gave it (none:
 * a positional); `allowFlag` is enqueue's way past the check; `noJobs` says
 * the database was asked too.
 */
export function unknownClassError(
  name: string,
  config: LeaseholdConfig | undefined,
  { option, allowFlag, noJobs = false }: { option?: string; allowFlag?: string; noJobs?: boolean } = {},
): InvalidInputError {
  const unknown = `${option === undefined ? '' : `${option}: `}unknown class ${JSON.stringify(name)}`;
  if (config !== undefined) {
    const listed = `${unknown} (${config.file} has ${config.classes.map((cls) => cls.name).join(', ')})`;
    return new InvalidInputError(
      'CLASS',
      allowFlag === undefined ? listed : `${listed}; pass ${allowFlag} to enqueue it anyway`,
    );
  }
  const remedies = ['--config', ...(allowFlag === undefined ? [] : [allowFlag])].join(', or ');
  return new InvalidInputError(
    'CLASS',
    `${unknown}: ${noJobs ? 'no job of it in the database, and ' : ''}there is no config to check it against (give ${remedies})`,
  );
}

/**
 * A `--class` that picks among existing jobs (list, retry). With --config
 * its list decides, as for enqueue and pause. With --db alone there is no
 * list, so a class the database holds jobs of is known; any other is a typo,
 * refused rather than answered with nothing.
 */
export async function checkClassOption(name: string | undefined, { config, store }: Context): Promise<void> {
  if (name === undefined) return;
  if (name.trim() === '') throw new InvalidInputError('CLASS', '--class must not be empty');
  if (config !== undefined) {
    if (classConfig(config, name) === undefined) throw unknownClassError(name, config, { option: '--class' });
    return;
  }
  if ((await store.jobList({ class: name, limit: 1 })).length === 0)
    throw unknownClassError(name, config, { option: '--class', noJobs: true });
}
