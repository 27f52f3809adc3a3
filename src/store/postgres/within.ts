import { InvalidInputError } from '../../errors.js';
import type { ApplicationClient } from '../within.js';

const CHECK_OUT =
  'check out a client (const client = await pool.connect()), run BEGIN on it, and pass that client as tx';

/**
 * The application's client must be inside a transaction it began, and one
 * still usable: outside one, the job would commit on its own. node-postgres
 * keeps the status the server last reported (`I` idle, `T` in a transaction,
 * `E` in a failed one), so this costs no round trip. Anything without that
 * status is refused: a `pg.Pool` runs each query on whichever client is free,
 * in a transaction of its own, so nothing could be inside the caller's.
 */
export function checkApplicationClient(client: ApplicationClient): void {
  const candidate = client as Partial<ApplicationClient> | null;
  if (typeof candidate?.query !== 'function') {
    throw new InvalidInputError('TX', `tx must be a pg Client or PoolClient inside a transaction: ${CHECK_OUT}`);
  }
  if (typeof candidate.getTransactionStatus !== 'function') {
    const what = isPool(candidate) ? 'a pg.Pool commits each query on its own' : 'tx has no transaction status';
    throw new InvalidInputError('TX', `${what}, outside your transaction: ${CHECK_OUT} (pg 8.12 or later)`);
  }
  const status = candidate.getTransactionStatus();
  if (status === 'E') {
    throw new InvalidInputError('TX', 'tx is in a failed transaction: roll it back (or to a savepoint) first');
  }
  if (status !== 'T')
    throw new InvalidInputError('TX', 'tx must be a client inside a transaction: run BEGIN on it first');
}

function isPool(candidate: object): boolean {
  return 'totalCount' in candidate && typeof (candidate as { connect?: unknown }).connect === 'function';
}
