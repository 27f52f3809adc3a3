import pg from 'pg';
import { NOTIFY_SQL, JOBS_CHANNEL } from './sql/notify.js';

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to others)
 * and call `onJob` for each notification about one of `classes`. When that
 * connection breaks, `onError` hears why and `onJob` is called once more, so
 * a waiting worker polls instead of sleeping on a dead line.
 */
export async function listenForJobs(
  config: pg.ClientConfig,
  classes: string[],
  onJob: () => void,
  onError?: (error: Error) => void,
): Promise<() => Promise<void>> {
  const wanted = new Set(classes);
  const client = new pg.Client(config);
  let closed = false;
  client.on('notification', (message) => {
    if (!closed && message.channel === JOBS_CHANNEL && message.payload !== undefined && wanted.has(message.payload)) onJob();
  });
  client.on('error', (error) => {
    if (closed) return;
    closed = true;
    if (onError === undefined) process.emitWarning(`leasehold: job notifications stopped: ${error.message}`, { code: 'LEASEHOLD_PG_LISTEN' });
    else onError(error);
    onJob();
    // The connection is already broken and its error reported: ending it can only fail the same way.
    client.end().catch(() => undefined);
  });
  await client.connect();
  try {
    await client.query(NOTIFY_SQL.listen.text);
  } catch (error) {
    closed = true;
    await client.end();
    throw error;
  }
  return async () => {
    if (closed) return;
    closed = true;
    await client.end();
  };
}
