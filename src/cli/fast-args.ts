/**
 * The usual command line without yargs, slow to load for a short command, which
 * lays out the whole help text on every run: a known command whose words
 * parse strictly by its own tables (options of type string or boolean, with
 * a default, requiresArg and coerce at most; numbers are strings that coerce
 * parses, see numeric-options.ts). Anything else (help, an unknown, repeated
 * or negated option, a value that looks like an option or that coerce
 * refuses, a missing or extra positional) gets undefined, and yargs parses it
 * and answers as it always has. test/cli/fast-args.test.ts holds the two
 * parsers to the same result.
 */
import { parseArgs } from 'node:util';
import type { Options } from 'yargs';
import type { CommandSpec, GlobalArgs } from './context.js';

/** requiresArg is what strict parseArgs does for every string option anyway. */
const PLAIN_OPTION_KEYS = new Set(['type', 'default', 'describe', 'global', 'coerce', 'requiresArg']);
const OPTION_TYPES = new Set(['string', 'boolean']);
/** Words that yargs would take as a boolean option's value, where a strict parser sees a positional. */
const BOOLEAN_WORDS = new Set(['true', 'false']);

export function fastArgs(
  argv: readonly string[],
  spec: CommandSpec<GlobalArgs>,
  globals: Record<string, Options>,
): GlobalArgs | undefined {
  const tables: Record<string, Options> = { ...globals, ...spec.options };
  const plain = Object.values(tables).every(
    (option) => OPTION_TYPES.has(String(option.type)) && Object.keys(option).every((key) => PLAIN_OPTION_KEYS.has(key)),
  );
  const wanted = positionalNames(spec);
  if (!plain || wanted === undefined || argv.includes('--')) return undefined;

  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv, tables);
  } catch {
    return undefined; // yargs says what is wrong, in its words
  }
  const { values, positionals, tokens } = parsed;
  const optionTokens = tokens.filter((token) => token.kind === 'option');
  if (new Set(optionTokens.map((token) => token.name)).size !== optionTokens.length) return undefined;
  const booleanValueNext = tokens.some(
    (token, i) => token.kind === 'option' && tables[token.name]?.type === 'boolean' && isBooleanWord(tokens[i + 1]),
  );
  if (booleanValueNext) return undefined;

  const [name, ...given] = positionals;
  const required = wanted.filter((positional) => positional.required).length;
  if (given.length < required || given.length > wanted.length) return undefined;

  const args: Record<string, unknown> = { _: [name], $0: 'leasehold' };
  wanted.forEach((positional, i) => {
    if (given[i] !== undefined) args[positional.name] = given[i];
  });
  for (const [option, table] of Object.entries(tables)) {
    const raw = values[option] ?? table.default;
    if (raw === undefined) continue;
    let value: unknown;
    try {
      // As yargs does, defaults included.
      value = table.coerce === undefined ? raw : table.coerce(raw);
    } catch {
      return undefined; // yargs runs the same coerce and says what is wrong
    }
    args[option] = value;
    args[camelCase(option)] = value;
  }
  return args as unknown as GlobalArgs;
}

function parse(argv: readonly string[], tables: Record<string, Options>) {
  const options = Object.fromEntries(
    Object.entries(tables).map(([option, table]) => [
      option,
      { type: table.type === 'boolean' ? ('boolean' as const) : ('string' as const) },
    ]),
  );
  return parseArgs({ args: [...argv], options, strict: true, allowPositionals: true, tokens: true });
}

/** `show <id>` -> [{ name: 'id', required: true }]; undefined for what yargs alone reads (variadic positionals, or a positional that is not a string). */
function positionalNames(spec: CommandSpec<GlobalArgs>): { name: string; required: boolean }[] | undefined {
  const words = spec.command.split(/\s+/).slice(1);
  const names = words.map((word) => ({ name: word.slice(1, -1), required: word.startsWith('<') }));
  const readable = names.every(
    ({ name }) => /^[\w-]+$/.test(name) && (spec.positionals?.[name]?.type ?? 'string') === 'string',
  );
  return readable ? names : undefined;
}

function isBooleanWord(token: { kind: string; value?: unknown } | undefined): boolean {
  return token?.kind === 'positional' && BOOLEAN_WORDS.has(String(token.value));
}

function camelCase(option: string): string {
  return option.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
