import { InvalidInputError } from '../errors.js';
import { redactDatabase } from './database-url.js';

/**
 * What a command that must not create leasehold's tables says where there
 * are none: where it looked, and what creates them.
 */
export function noQueueError(database: string, where = database): InvalidInputError {
  return new InvalidInputError(
    'DATABASE',
    `no leasehold queue in ${where}: \`leasehold migrate --db '${redactDatabase(database)}'\` creates its tables, as the supervisor does at start`,
  );
}
