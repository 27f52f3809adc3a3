/** What a reload would change between two configs, and which of those changes a running supervisor cannot make. */
import diff, { type Difference } from 'microdiff';
import { redactDatabase } from '../store/database-url.js';
import type { LeaseholdConfig } from './schema.js';

/** Fields fixed for a supervisor's life, and why. */
const FIXED: Record<string, string> = {
  database: 'the database is chosen at start-up (a supervisor and its children hold one connection each to it)',
  host: 'the host identity is part of every worker id of this supervisor',
  http: 'the HTTP server listens from start-up',
  log: 'the log file is opened at start-up (log.level is the one log field a reload changes)',
  statement_timeout_seconds: "the supervisor's and its children's connections are opened with it at start-up",
};

export interface ConfigChanges {
  /** One line per change, e.g. `classes.email.processes: 1 → 3`, `classes.report: added`. */
  changes: string[];
  /** Why the reload cannot be applied: one reason per field, none when it can. */
  refused: string[];
}

export function configChanges(before: LeaseholdConfig, after: LeaseholdConfig): ConfigChanges {
  const differences = diff(comparable(before), comparable(after));
  const refused = new Set<string>();
  for (const { path } of differences) {
    const field = String(path[0]);
    const reason = FIXED[field];
    if (reason === undefined || path.join('.') === 'log.level') continue;
    // Which database is which is what the operator needs to see first.
    const moved =
      field === 'database'
        ? `the supervisor runs on ${redactDatabase(before.database)}, the file now names ${redactDatabase(after.database)}: `
        : '';
    refused.add(`${field} cannot change without a restart: ${moved}${reason}`);
  }
  return { changes: differences.map(describe), refused: [...refused] };
}

/** Classes keyed by name, so adding one in the middle of the list reads as one addition; the file path is not config. */
function comparable(config: LeaseholdConfig): Record<string, unknown> {
  const { file: _file, classes, ...rest } = config;
  return { ...rest, classes: Object.fromEntries(classes.map((cls) => [cls.name, cls])) };
}

function describe(difference: Difference): string {
  const path = difference.path.join('.');
  const isClass = difference.path.length === 2 && difference.path[0] === 'classes';
  switch (difference.type) {
    case 'CREATE':
      return isClass ? `${path}: added` : `${path}: (unset) → ${show(difference.value)}`;
    case 'REMOVE':
      return isClass ? `${path}: removed` : `${path}: ${show(difference.oldValue)} → (unset)`;
    case 'CHANGE':
      return `${path}: ${show(difference.oldValue)} → ${show(difference.value)}`;
  }
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
