/**
 * The dashboard on node:http: one request listener, mounted by the
 * supervisor's HTTP server (`http.dashboard: true`) and by
 * `leasehold dashboard`, which serves it alone (DashboardServer).
 */
import { getRequestListener } from '@hono/node-server';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../log.js';
import type { ClassConfig } from '../config/schema.js';
import { redactDatabase } from '../store/database-url.js';
import { dashboardApp } from './app.js';
import { dashboardData, type DashboardStore } from './data.js';
import { checkListenAddress, checkToken } from './security.js';

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export interface DashboardSettings {
  store: DashboardStore;
  /** The database setting, as the pages name it (a URL's password is hidden). */
  database: string;
  /** The config's classes, when there is a config: their restart windows judge a crash loop. */
  classes: readonly ClassConfig[] | undefined;
  readOnly: boolean;
  /** From --token or LEASEHOLD_DASHBOARD_TOKEN; undefined: none (loopback only). */
  token: string | undefined;
  logger: Logger;
  now?: () => number;
}

/** The dashboard's request listener, for a node:http server; checks the token first (a bad one throws). */
export function dashboardListener(settings: DashboardSettings): RequestListener {
  const now = settings.now ?? Date.now;
  const app = dashboardApp({
    data: dashboardData(settings.store, { now, classes: settings.classes }),
    actions: settings.store,
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
  private server: Server | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly settings: DashboardSettings & { host: string; port: number }) {}

  /** Listen; returns the port (port 0: any free one). Refuses a non-loopback address without a token, and names host and port when it cannot listen. */
  async start(): Promise<number> {
    const { host, port } = this.settings;
    checkListenAddress(host, checkToken(this.settings.token));
    const server = createServer(dashboardListener(this.settings));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new Error(`dashboard: cannot listen on ${host}:${port}: ${error.message}`, { cause: error })));
      server.listen(port, host, () => resolve());
    });
    return (server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return Promise.resolve();
    this.stopping ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return this.stopping;
  }
}
