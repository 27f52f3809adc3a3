import { InvalidInputError } from '../../errors.js';
import type { ApplicationClient } from '../within.js';

/**
 * The application's client must be inside a transaction it began, and one
 * still usable: outside one, the job would commit on its own. node-postgres
 * keeps the status the server last reported (`I` idle, `T` in a transaction,
 * `E` in a failed one), so this costs no round trip.
 */
export function checkApplicationClient(client: ApplicationClient): void {
  if (typeof (client as Partial<ApplicationClient> | null)?.query !== 'function') {
    throw new InvalidInputError('TX', 'tx must be a pg Client or PoolClient on which you ran BEGIN');
  }
  const status = typeof client.getTransactionStatus === 'function' ? client.getTransactionStatus() : 'T';
  if (status === 'I')
    throw new InvalidInputError('TX', 'tx must be a client inside a transaction: run BEGIN on it first');
  if (status === 'E') {
    throw new InvalidInputError('TX', 'tx is in a failed transaction: roll it back (or to a savepoint) first');
  }
}
