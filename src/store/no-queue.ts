import { SchemaMissingError } from '../errors.js';
import { redactDatabase } from './database-url.js';

/**
 * What a command that must not create leasehold's tables says where there
 * are none: where it looked, and what creates them.
 */
export function noQueueError(database: string, where = database): SchemaMissingError {
  return new SchemaMissingError(
    `no leasehold queue in ${where}: \`leasehold migrate --db '${redactDatabase(database)}'\` creates its tables, as the supervisor does at start`,
  );
}
