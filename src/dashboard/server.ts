/**
 * The dashboard on node:http: one request listener, mounted by the
 * supervisor's HTTP server (`http.dashboard: true`) and by
 * `leasehold dashboard`, which serves it alone (DashboardServer).
 */
import { getRequestListener } from '@hono/node-server';
import { ListeningServer, type RequestListener } from '../listening-server.js';
import type { Logger } from '../log.js';
import type { ClassConfig } from '../config/schema.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES } from '../limits.js';
import { schedulesOf } from '../queue/schedules.js';
import { redactDatabase } from '../store/database-url.js';
import { dashboardApp } from './app.js';
import { dashboardData, type DashboardStore } from './data.js';
import { checkListenAddress, checkToken } from './security.js';

export interface DashboardSettings {
  store: DashboardStore;
  /** The database setting, as the pages name it (a URL's password is hidden). */
  database: string;
  /** The config's classes, when there is a config: their restart windows judge a crash loop. */
  classes: readonly ClassConfig[] | undefined;
  /** The config's payload_limit_bytes: a schedule's "run now" checks its payload as the scheduler does. */
  payloadLimitBytes?: number;
  readOnly: boolean;
  /** From --token or LEASEHOLD_DASHBOARD_TOKEN; undefined: none (loopback only). */
  token: string | undefined;
  logger: Logger;
  now?: () => number;
}

/** The dashboard's request listener, for a node:http server; checks the token first (a bad one throws). */
export function dashboardListener(settings: DashboardSettings): RequestListener {
  const now = settings.now ?? (() => settings.store.clock.now());
  const app = dashboardApp({
    data: dashboardData(settings.store, { now, classes: settings.classes }),
    actions: settings.store,
    schedules: schedulesOf(settings.classes ?? []),
    classes: (settings.classes ?? []).map((cls) => cls.name),
    payloadLimitBytes: settings.payloadLimitBytes ?? DEFAULT_PAYLOAD_LIMIT_BYTES,
    database: redactDatabase(settings.database),
    readOnly: settings.readOnly,
    token: checkToken(settings.token),
    logger: settings.logger,
    now,
  });
  return getRequestListener(app.fetch);
}

/** The dashboard served alone (`leasehold dashboard`): start, then stop (safe twice, or before start). */
export class DashboardServer {
  private listening: Promise<ListeningServer> | undefined;

  constructor(private readonly settings: DashboardSettings & { host: string; port: number }) {}

  /** Listen; returns the port (port 0: any free one). Refuses a non-loopback address without a token, and names host and port when it cannot listen. */
  async start(): Promise<number> {
    const { host, port } = this.settings;
    checkListenAddress(host, checkToken(this.settings.token));
    this.listening ??= ListeningServer.listen(dashboardListener(this.settings), host, port, 'dashboard');
    return (await this.listening).port;
  }

  stop(): Promise<void> {
    return (
      this.listening?.then(
        (server) => server.stop(),
        () => undefined,
      ) ?? Promise.resolve()
    );
  }
}
