/**
 * A TCP proxy between the processes of a test and a server, that can leave
 * some of its connections half-open: it stops forwarding them and closes
 * nothing, as a network partition or a lost NAT entry leaves them (the
 * kernel still acknowledges what each side sends; no answer ever comes).
 * Connections are told apart by the process at their other end, found in
 * /proc, so that one child of a supervisor can be cut off and no one else.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import { afterEach } from 'vitest';
import { PG_URL } from './postgres.js';

/** Whether new connections are cut at once (a server that is down, or a network that refuses): set by `refuse`. */
interface Doors {
  refusing: boolean;
}

interface Line {
  client: net.Socket;
  server: net.Socket;
  frozen: boolean;
}

export class TcpProxy {
  private constructor(
    private readonly listener: net.Server,
    readonly port: number,
    private readonly lines: Set<Line>,
    private readonly doors: Doors,
  ) {}

  /** Cut every new connection at once (true), or forward them again (false); open ones are left as they are. */
  refuse(refusing: boolean): void {
    this.doors.refusing = refusing;
  }

  /** Listen on a free port of 127.0.0.1 and forward every connection to `target`. Closed after the test. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const lines = new Set<Line>();
    const doors: Doors = { refusing: false };
    const listener = net.createServer((client) => (doors.refusing ? client.destroy() : forward(lines, client, target)));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const proxy = new TcpProxy(listener, (listener.address() as net.AddressInfo).port, lines, doors);
    afterEach(() => proxy.close());
    return proxy;
  }

  /** A proxy to the suites' PostgreSQL server. */
  static toPostgres(): Promise<TcpProxy> {
    const server = new URL(PG_URL);
    return TcpProxy.start({ host: server.hostname || '127.0.0.1', port: Number(server.port || 5432) });
  }

  /** `url` (a postgres:// URL) through this proxy. */
  route(url: string): string {
    const routed = new URL(url);
    routed.hostname = '127.0.0.1';
    routed.port = String(this.port);
    return routed.toString();
  }

  /**
   * Stop forwarding, both ways, every connection open now whose other end is
   * process `pid`, and close none of them. Returns how many; later
   * connections are forwarded as usual.
   */
  freezeConnectionsOf(pid: number): number {
    const ports = localPortsOf(pid);
    let frozen = 0;
    for (const line of this.lines) {
      if (line.frozen || !ports.has(line.client.remotePort ?? -1)) continue;
      line.frozen = true;
      line.client.pause();
      line.server.pause();
      frozen++;
    }
    return frozen;
  }

  async close(): Promise<void> {
    for (const { client, server } of this.lines) {
      client.destroy();
      server.destroy();
    }
    this.lines.clear();
    await new Promise<void>((resolve) => this.listener.close(() => resolve()));
  }
}

/** Forward `client` to `target`, both ways, for as long as both ends are open and the line is not frozen. */
function forward(lines: Set<Line>, client: net.Socket, target: { host: string; port: number }): void {
  const server = net.connect(target.port, target.host);
  const line: Line = { client, server, frozen: false };
  lines.add(line);
  const relay = (from: net.Socket, to: net.Socket) => from.on('data', (chunk) => line.frozen || to.write(chunk));
  relay(client, server);
  relay(server, client);
  const end = () => {
    lines.delete(line);
    client.destroy();
    server.destroy();
  };
  for (const socket of [client, server]) socket.on('close', end).on('error', end);
}

/** The local TCP ports of process `pid`'s sockets (IPv4 and IPv6), from /proc. */
function localPortsOf(pid: number): Set<number> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket !== null) inodes.add(socket[1]!);
    } catch {
      // closed while we read
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of readFileSync(table, 'utf8').trim().split('\n').slice(1)) {
      const fields = row.trim().split(/\s+/);
      if (inodes.has(fields[9]!)) ports.add(Number.parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}
