import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of a database, which a test cuts (every connection dropped, new ones refused)
 * and restores on the same port: the database going away and coming back, as the gateway sees it.
 */
export class TcpProxy {
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async start(port: number, target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(port, target);
    await proxy.restore();
    return proxy;
  }

  /** The URL of `url`'s database, reached through this relay. */
  through(url: string): string {
    const via = new URL(url);
    via.hostname = '127.0.0.1';
    via.port = String(this.port);
    return via.toString();
  }

  /** Drops every relayed connection and refuses new ones. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((done) => server.close(() => done()));
  }

  /** Accepts and relays connections again, on the same port. */
  async restore(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target);
      this.sockets.add(client).add(upstream);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((done, fail) => {
      server.once('error', fail);
      server.listen(this.port, '127.0.0.1', () => done());
    });
    this.server = server;
  }

  close(): Promise<void> {
    return this.cut();
  }
}
