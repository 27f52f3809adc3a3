import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { ListeningServer, type RequestListener } from '../src/listening-server.js';
import type { Logger } from '../src/log.js';

/** Why /healthz says 503: the failing dependency, and what is wrong with it. */
export interface Unhealthy {
  dependency: 'database' | 'supervisor';
  reason: string;
}

export interface HttpServerOptions {
  host: string;
  /** 0: any free port (see `port` after start). */
  port: number;
  registry: Registry;
  /** Why the supervisor is not healthy, or undefined when it is. */
  unhealthy: () => Promise<Unhealthy | undefined>;
  logger: Logger;
  /** The web dashboard (`http.dashboard: true`): every other path is its. */
  dashboard?: RequestListener;
}

/** `/metrics` (Prometheus text) and `/healthz` (200 or 503), only when the config has `http`; the dashboard on the other paths when it is on. */
export class HttpServer {
  private listening: Promise<ListeningServer> | undefined;
  private boundPort: number | undefined;

  constructor(private readonly options: HttpServerOptions) {}

  /** The port it listens on, once started. */
  get port(): number | undefined {
    return this.boundPort;
  }

  /** Listen; rejects (naming host and port) when it cannot, e.g. the port is taken. */
  async start(): Promise<number> {
    this.listening ??= ListeningServer.listen(
      (request, response) => {
        void this.route(request, response).catch((error: unknown) => {
          this.options.logger.warn('http request failed', { err: error, path: request.url });
          if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
          response.end('internal error\n');
        });
      },
      this.options.host,
      this.options.port,
      'http',
    );
    this.boundPort = (await this.listening).port;
    return this.boundPort;
  }

  /** Stop listening and drop open connections; safe twice, or before start. */
  stop(): Promise<void> {
    return (
      this.listening?.then(
        (server) => server.stop(),
        () => undefined,
      ) ?? Promise.resolve()
    );
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    const { dashboard } = this.options;
    if (dashboard !== undefined && path !== '/metrics' && path !== '/healthz') {
      dashboard(request, response);
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    if (path === '/metrics') {
      const { registry } = this.options;
      let body: string;
      try {
        body = await registry.metrics();
      } catch (error) {
        this.options.logger.warn('metrics scrape failed', { err: error });
        response
          .writeHead(503, { 'content-type': 'text/plain' })
          .end(`metrics unavailable: ${(error as Error).message}\n`);
        return;
      }
      response.writeHead(200, { 'content-type': registry.contentType }).end(body);
      return;
    }
    if (path === '/healthz') {
      const unhealthy = await this.options.unhealthy().catch((error: unknown): Unhealthy => ({
        dependency: 'supervisor',
        reason: `health check failed: ${(error as Error).message}`,
      }));
      const body = unhealthy === undefined ? { status: 'ok' } : { status: 'unavailable', ...unhealthy };
      response
        .writeHead(unhealthy === undefined ? 200 : 503, { 'content-type': 'application/json' })
        .end(`${JSON.stringify(body)}\n`);
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics or /healthz\n');
  }
}
