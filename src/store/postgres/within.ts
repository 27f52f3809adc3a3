import pg from 'pg';
import { InvalidInputError } from '../../errors.js';
import type { ApplicationClient } from '../within.js';

/** no_active_sql_transaction: a SAVEPOINT outside BEGIN. */
const NO_TRANSACTION = '25P01';

/**
 * Run `work` on the application's client, inside the transaction it began:
 * in a savepoint, so a statement of ours that fails rolls back to it and the
 * application's transaction stays usable; with the queue's schema as the
 * search_path, so our statements find our tables whatever the application's
 * own search_path is, and the application's is put back afterwards. The two
 * bracketing queries carry no values: the schema is spliced in quoted, the
 * way migrations do.
 */
export async function onApplicationClient<T>(
  client: ApplicationClient,
  schema: string,
  work: (db: ApplicationClient) => Promise<T>,
): Promise<T> {
  const searchPath = pg.escapeLiteral(pg.escapeIdentifier(schema));
  let previous: string;
  try {
    const [, set] = (await client.query(
      `SAVEPOINT leasehold_enqueue; SELECT current_setting('search_path') AS previous, set_config('search_path', ${searchPath}, true)`,
    )) as unknown as [pg.QueryResult, pg.QueryResult<{ previous: string }>];
    previous = set.rows[0]!.previous;
  } catch (error) {
    if (error instanceof pg.DatabaseError && error.code === NO_TRANSACTION) {
      throw new InvalidInputError('TX', 'tx must be a client inside a transaction: run BEGIN on it first');
    }
    throw error;
  }
  let result: T;
  try {
    result = await work(client);
  } catch (error) {
    // Undoes our writes and the search_path together; the application's own writes before it stay.
    // A client too broken to roll back fails the application's next statement itself: the first error is the one to tell.
    await client
      .query('ROLLBACK TO SAVEPOINT leasehold_enqueue; RELEASE SAVEPOINT leasehold_enqueue')
      .catch(() => undefined);
    throw error;
  }
  await client.query(
    `SELECT set_config('search_path', ${pg.escapeLiteral(previous)}, true); RELEASE SAVEPOINT leasehold_enqueue`,
  );
  return result;
}
