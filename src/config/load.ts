/**
 * queue.yaml → a frozen LeaseholdConfig. Every problem becomes a ConfigError
 * whose message has one line per problem: `<file>: <field path>: <expectation>`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { closest } from '../closest.js';
import { ConfigError } from '../errors.js';
import { isPostgresUrl } from '../store/database-url.js';
import { configSchema, type ConfigObject, type LeaseholdConfig, type ParsedConfig } from './schema.js';

/** A config as a path to its file, or as an object (see configFromObject). */
export type ConfigSource = string | ConfigObject;

/** The name a config given as an object goes by in messages, in the working directory its paths are resolved from. */
const OBJECT_CONFIG_NAME = '(config object)';

/** A config from its source: the file read, or the object checked as a file's content would be. */
export function readConfig(source: ConfigSource): LeaseholdConfig {
  return typeof source === 'string' ? loadConfig(source) : configFromObject(source);
}

/**
 * A config given as an object: checked as queue.yaml's content is, its
 * relative paths resolved against the working directory. Its `file` names
 * it in messages (`<cwd>/(config object)`), and `source` keeps it for a
 * reload, which checks it again.
 */
export function configFromObject(raw: ConfigObject, folder = process.cwd()): LeaseholdConfig {
  // A copy is kept (and frozen with the config): the application's own object stays its own.
  return validated(raw, path.join(folder, OBJECT_CONFIG_NAME), structuredClone(raw));
}

export function loadConfig(file: string): LeaseholdConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`${file}: cannot read the config file: ${describeReadError(error)}`], { cause: error });
  }
  return parseConfig(text, file);
}

/** `file` names the source in messages, and its folder anchors relative paths. */
export function parseConfig(text: string, file: string): LeaseholdConfig {
  const raw = parseYaml(text, file);
  if (raw === null || raw === undefined)
    throw new ConfigError([`${file}: the file is empty, expected a mapping with database and classes`]);
  return validated(raw, file);
}

function validated(raw: unknown, file: string, source?: ConfigObject): LeaseholdConfig {
  // jitless: zod's eval-compiled fast path costs more to build than it saves on the one parse a process makes.
  const result = configSchema.safeParse(raw, { reportInput: true, jitless: true });
  if (!result.success) throw new ConfigError(result.error.issues.map((issue) => `${file}: ${describeIssue(issue)}`));
  const config = resolvePaths(result.data, path.resolve(file));
  return deepFreeze(source === undefined ? config : { ...config, source });
}

function parseYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      doc.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return `${file}:${line}:${col}: YAML syntax error: ${error.message.split('\n')[0]}`;
      }),
    );
  }
  try {
    return doc.toJS();
  } catch (error) {
    // e.g. too many aliases: valid syntax, but not something to expand.
    throw new ConfigError([`${file}: YAML error: ${error instanceof Error ? error.message : String(error)}`], {
      cause: error,
    });
  }
}

function resolvePaths(parsed: ParsedConfig, absoluteFile: string): LeaseholdConfig {
  const folder = path.dirname(absoluteFile);
  return {
    file: absoluteFile,
    ...parsed,
    database:
      isPostgresUrl(parsed.database) || parsed.database === ':memory:'
        ? parsed.database
        : path.resolve(folder, parsed.database),
    log: { ...parsed.log, file: parsed.log.file === null ? null : path.resolve(folder, parsed.log.file) },
    middleware: parsed.middleware.map((file) => path.resolve(folder, file)),
    // Each class holds its whole chain, top-level first: what its children run, and what a reload compares.
    classes: parsed.classes.map((cls) => ({
      ...cls,
      handler: path.resolve(folder, cls.handler),
      middleware: [...parsed.middleware, ...cls.middleware].map((file) => path.resolve(folder, file)),
    })),
  };
}

/** ['classes', 1, 'lease_seconds'] → 'classes[1].lease_seconds'. */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out === '' ? String(segment) : `.${String(segment)}`;
  }
  return out === '' ? '(top level)' : out;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys(issue.path);
    const keys = issue.keys.map((key) => {
      const meant = closest(key, known) ?? known.find((name) => name.startsWith(`${key}_`));
      return `${JSON.stringify(key)}${meant === undefined ? '' : ` (did you mean ${JSON.stringify(meant)}?)`}`;
    });
    return `${where}: unknown key${issue.keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
  }
  // Cross-field rules write their whole message, value included.
  if (issue.code === 'custom') return `${where}: ${issue.message}`;
  if (issue.input === undefined) return `${where}: missing, ${issue.message}`;
  return `${where}: ${issue.message}, got ${describeValue(issue.input)}`;
}

/** The parts of a zod schema's definition the walk below reads. */
interface SchemaDef {
  type: string;
  shape?: Record<string, { _zod: { def: SchemaDef } }>;
  element?: { _zod: { def: SchemaDef } };
  innerType?: { _zod: { def: SchemaDef } };
  in?: { _zod: { def: SchemaDef } };
}

/** The keys the config schema knows for the mapping at `at` (`['classes', 0]`): what a misspelt key was meant to be. */
function knownKeys(at: readonly PropertyKey[]): string[] {
  let def: SchemaDef | undefined = (configSchema as unknown as { _zod: { def: SchemaDef } })._zod.def;
  const unwrap = (d: SchemaDef | undefined): SchemaDef | undefined => {
    // Defaults, optional and nullable fields wrap their schema; a transform is a pipe from it.
    while (d !== undefined && (d.innerType !== undefined || d.in !== undefined)) d = (d.innerType ?? d.in)?._zod.def;
    return d;
  };
  for (const segment of at) {
    def = unwrap(def);
    def = typeof segment === 'number' ? def?.element?._zod.def : def?.shape?.[String(segment)]?._zod.def;
  }
  return Object.keys(unwrap(def)?.shape ?? {});
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? '[]' : 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const shown = value.length > 60 ? `${value.slice(0, 59)}…` : value;
    return JSON.stringify(shown);
  }
  return String(value);
}

function describeReadError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder, not a file';
  return error instanceof Error ? error.message : String(error);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
