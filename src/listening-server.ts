/** A node:http server bound to one address, stopped once: the supervisor's HTTP port and `leasehold dashboard` both run one. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

export class ListeningServer {
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    /** The bound port (a free one when 0 was asked for). */
    readonly port: number,
  ) {}

  /** Listen; rejects naming `what`, host and port when it cannot (the port is taken, say). */
  static async listen(listener: RequestListener, host: string, port: number, what: string): Promise<ListeningServer> {
    const server = createServer(listener);
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) =>
        reject(new Error(`${what}: cannot listen on ${host}:${port}: ${error.message}`, { cause: error }));
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    return new ListeningServer(server, (server.address() as AddressInfo).port);
  }

  /** Stop listening and drop open connections; safe twice. */
  stop(): Promise<void> {
    this.stopping ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.stopping;
  }
}
