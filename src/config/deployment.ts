/**
 * What start-up refuses beyond the schema, checked the same way by
 * `supervise --check-config`, start-up, `leasehold reload` and a live
 * reload, so that a config one of them accepts is one the others start:
 * a SQLite path that can be opened, the dashboard's exposure, and every
 * handler and middleware module, imported in a short-lived process of its own
 * (handler-probe.ts), never in the caller.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../errors.js';
import { isPostgresUrl } from '../store/database-url.js';
import { exposureProblem, TOKEN_ENV, tokenProblem } from './exposure.js';
import type { ModuleKind } from './handler-module.js';
import { readConfig, type ConfigSource } from './load.js';
import type { ClassConfig, LeaseholdConfig } from './schema.js';

const PROBE = fileURLToPath(new URL('./handler-probe.js', import.meta.url));
/** A handler module whose top-level code takes longer than this to load is refused: a child would hang at start the same way. */
export const HANDLER_LOAD_TIMEOUT_MS = 10_000;

export interface DeploymentProblem {
  /** The field at fault, e.g. `classes[1].handler`. */
  field: string;
  message: string;
  /** For a handler or middleware module that cannot be used: its class, its file, and why (`message` without the class). */
  handler?: { class: string; file: string; problem: string };
}

/** Every problem of a loaded config that start-up would refuse; none: it starts. */
export async function deploymentProblems(
  config: LeaseholdConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DeploymentProblem[]> {
  const problems: DeploymentProblem[] = [];
  const database = sqlitePathProblem(config.database);
  if (database !== undefined) problems.push({ field: 'database', message: database });
  if (config.http?.dashboard === true) {
    const token = env[TOKEN_ENV] || undefined;
    const badToken = token === undefined ? undefined : tokenProblem(token);
    if (badToken !== undefined) problems.push({ field: TOKEN_ENV, message: badToken });
    const exposed = exposureProblem(config.http.host, token);
    if (exposed !== undefined) problems.push({ field: 'http.host', message: exposed });
  }
  // A top-level middleware is in every class's chain: each module is probed once.
  const probe = moduleProbe(env);
  const handlerProblems = await Promise.all(
    config.classes.map(async (cls, index): Promise<DeploymentProblem | undefined> => {
      const found = await classModuleProblem(cls, probe);
      return (
        found && {
          field: `classes[${index}].${found.field}`,
          message: `class ${cls.name}: ${found.problem}`,
          handler: { class: cls.name, file: found.file, problem: found.problem },
        }
      );
    }),
  );
  return [...problems, ...handlerProblems.filter((problem) => problem !== undefined)];
}

type ModuleProbe = (file: string, kind: ModuleKind) => Promise<string | undefined>;

/** Why a module cannot be used, each file probed once (in a process of its own: probeModule). */
function moduleProbe(env: NodeJS.ProcessEnv): ModuleProbe {
  const probes = new Map<string, Promise<string | undefined>>();
  return (file, kind) => {
    let probed = probes.get(file);
    if (probed === undefined)
      probes.set(file, (probed = existsSync(file) ? probeModule(file, kind, env) : noSuchFile(file)));
    return probed;
  };
}

/** The first of a class's modules (its handler, then its middleware) that cannot be used, and why; none: all can. */
export async function classModuleProblem(
  cls: ClassConfig,
  probe: ModuleProbe = moduleProbe(process.env),
): Promise<{ field: ModuleKind; file: string; problem: string } | undefined> {
  const modules = [
    { kind: 'handler' as const, file: cls.handler },
    ...cls.middleware.map((file) => ({ kind: 'middleware' as const, file })),
  ];
  for (const { kind, file } of modules) {
    const problem = await probe(file, kind);
    if (problem !== undefined) return { field: kind, file, problem };
  }
  return undefined;
}

/** The problems as the one error start-up and the CLI report: one line each, `<file>: <field>: <what>`. */
export function deploymentError(config: LeaseholdConfig, problems: readonly DeploymentProblem[]): ConfigError {
  return new ConfigError(problems.map((problem) => `${config.file}: ${problem.field}: ${problem.message}`));
}

/** readConfig, then deploymentProblems: the config start-up would run, or a ConfigError (exit 2). */
export async function checkConfig(
  source: ConfigSource,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LeaseholdConfig> {
  const config = readConfig(source);
  const problems = await deploymentProblems(config, env);
  if (problems.length > 0) throw deploymentError(config, problems);
  return config;
}

/** Why a SQLite database cannot be opened or created at `database` (its folders are created as needed), or undefined. */
function sqlitePathProblem(database: string): string | undefined {
  if (isPostgresUrl(database) || database === ':memory:') return undefined;
  let existing = database;
  while (!existsSync(existing)) existing = path.dirname(existing);
  const isFolder = statSync(existing).isDirectory();
  if (existing === database)
    return isFolder
      ? `${database} is a folder, not a database file`
      : writable(database)
        ? undefined
        : `${database} is not writable`;
  if (!isFolder) return `cannot create ${database}: ${existing} is a file, not a folder`;
  return writable(existing) ? undefined : `cannot create ${database}: ${existing} is not writable`;
}

function writable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

async function noSuchFile(file: string): Promise<string> {
  return `no such file ${file}`;
}

/** Why `file` cannot be used as a handler or middleware (undefined: it can), from a probe process of its own. */
function probeModule(file: string, kind: ModuleKind, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PROBE, file, kind],
      { env, timeout: HANDLER_LOAD_TIMEOUT_MS, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        if (error === null) return resolve((JSON.parse(stdout) as { problem: string | null }).problem ?? undefined);
        if ((error as { killed?: boolean }).killed === true)
          return resolve(`${kind} ${file} did not finish loading within ${HANDLER_LOAD_TIMEOUT_MS / 1000}s`);
        const said = stderr.trim().split('\n').at(-1);
        resolve(`loading ${kind} ${file} ended its process (${said || error.message})`);
      },
    );
  });
}
