/**
 * A supervisor's host identity: what it writes into `workers.host`, and the
 * first part of its id (`<host>:<pid>:<random>`, so of every owner id its
 * children write into jobs). At start-up a supervisor takes back the jobs of
 * dead children recorded with its own host only, judged by their pids, so
 * two supervisors must share a host identity exactly when they share the
 * pids they see.
 *
 * Where it comes from, first found wins: the LEASEHOLD_HOST environment
 * variable, the config's `host:`, os.hostname(). The environment wins because
 * the identity belongs to the instance, not to the file: one queue.yaml is
 * often shared by every host or container (an image, a ConfigMap), while the
 * environment is set per instance (a pod's name, say).
 */
import { hostname } from 'node:os';
import { ConfigError } from '../errors.js';
import { HOST_IDENTITY } from './schema.js';

export const HOST_ENV = 'LEASEHOLD_HOST';

export function resolveHost(options: {
  configured: string | null;
  env?: NodeJS.ProcessEnv;
  hostname?: () => string;
}): string {
  const fromEnv = (options.env ?? process.env)[HOST_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (!HOST_IDENTITY.test(fromEnv))
      throw new ConfigError([
        `${HOST_ENV}: expected a host name without whitespace, ":" or "/", got ${JSON.stringify(fromEnv)}`,
      ]);
    return fromEnv;
  }
  if (options.configured !== null) return options.configured;
  return (options.hostname ?? hostname)();
}
