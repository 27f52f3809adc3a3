import pg from 'pg';
import { retryDelayMs } from '../../backoff.js';
import type { Statement } from './connection.js';
import { NOTIFY_SQL, JOBS_CHANNEL, OUTCOMES_CHANNEL } from './sql/notify.js';

/** Waits between attempts to listen again after the connection broke: 0.1 s doubling to 10 s, with jitter. */
const RECONNECT = { baseSeconds: 0.1, maxSeconds: 10, jitter: true };
const reconnectDelayMs = (failures: number) => retryDelayMs(RECONNECT, failures + 1);

/** What one listener hears: a channel, its LISTEN statement, and the payloads that concern it in the queue's schema. */
export interface ListenChannel {
  name: string;
  listen: Statement;
  /** Run on the connection before its LISTEN. */
  before: Statement[];
  /** The payloads to hear, given the schema the connection's queue lives in. */
  payloads: (schema: string) => string[];
  /** For warnings: what the notifications are about. */
  about: string;
}

/** Jobs enqueued (or retried) of one of `classes`: payload `<schema>:<class>`. */
export const jobsChannel = (classes: string[]): ListenChannel => ({
  name: JOBS_CHANNEL,
  listen: NOTIFY_SQL.listen,
  before: [],
  payloads: (schema) => classes.map((name) => `${schema}:${name}`),
  about: 'job notifications',
});

/** Jobs ended in the queue's schema: payload `<schema>`. */
export const OUTCOMES: ListenChannel = {
  name: OUTCOMES_CHANNEL,
  listen: NOTIFY_SQL.listenOutcomes,
  // A reader first, and after every end that did not see it: the caller's first look misses nothing.
  before: [NOTIFY_SQL.outcomesReader, NOTIFY_SQL.endsBeforeReader],
  payloads: (schema) => [schema],
  about: 'outcome notifications',
};

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to others)
 * and call `onWake` for each notification on the channel whose payload
 * concerns this queue.
 *
 * When that connection breaks (server restart, network, a terminated
 * backend), `onError` hears why, `onWake` runs at once (a waiting reader
 * polls instead of sleeping on a dead line), and the listener connects again
 * with backoff (RECONNECT), reporting each
 * failed attempt to `onError`. Once listening again, `onWake` runs once more:
 * notifications sent meanwhile were lost. The first connection is not
 * retried: its failure rejects. The function it resolves to stops listening
 * (and reconnecting); safe twice.
 */
export async function listenOn(
  config: pg.ClientConfig,
  channel: ListenChannel,
  onWake: () => void,
  onError?: (error: Error) => void,
): Promise<() => Promise<void>> {
  /** The payloads to hear, in the queue's schema (each connection asks which that is). */
  let wanted = new Set<string>();
  let stopped = false;
  let client: pg.Client | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let reconnecting: Promise<void> | undefined;
  let failures = 0;

  const report = (error: Error) => {
    if (onError === undefined)
      process.emitWarning(`leasehold: ${channel.about}: ${error.message}`, { code: 'LEASEHOLD_PG_LISTEN' });
    else onError(error);
  };

  /** Connect and LISTEN; on failure nothing stays open and the error is thrown. */
  const connect = async (): Promise<void> => {
    const next = new pg.Client(config);
    /** Set once LISTEN succeeded: errors before that reject this function instead. */
    let listening = false;
    let broken = false;
    const onBroken = (error: Error) => {
      if (!listening || broken || stopped) return;
      broken = true;
      if (client === next) client = undefined;
      // The connection is already broken and its error reported: ending it can only fail the same way.
      next.end().catch(() => undefined);
      report(error);
      onWake();
      scheduleReconnect();
    };
    next.on('notification', (message) => {
      if (!stopped && message.channel === channel.name && message.payload !== undefined && wanted.has(message.payload))
        onWake();
    });
    next.on('error', onBroken);
    next.on('end', () => onBroken(new Error('the listening connection closed')));
    try {
      await next.connect();
      const { schema } = (await next.query<{ schema: string }>(NOTIFY_SQL.queueSchema.text)).rows[0]!;
      wanted = new Set(channel.payloads(schema));
      for (const statement of channel.before) await next.query(statement.text);
      await next.query(channel.listen.text);
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    if (stopped) {
      await next.end();
      return;
    }
    listening = true;
    client = next;
  };

  const scheduleReconnect = () => {
    if (stopped) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      reconnecting = connect()
        .then(
          () => {
            failures = 0;
            if (!stopped) onWake();
          },
          (error: unknown) => {
            if (stopped) return;
            failures += 1;
            report(error instanceof Error ? error : new Error(String(error)));
            scheduleReconnect();
          },
        )
        .finally(() => (reconnecting = undefined));
    }, reconnectDelayMs(failures));
    // Waiting to reconnect never keeps a process alive on its own.
    retryTimer.unref();
  };

  await connect();
  return async () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(retryTimer);
    await reconnecting;
    const current = client;
    client = undefined;
    await current?.end();
  };
}
