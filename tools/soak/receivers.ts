// The apps' webhook endpoints: one healthy, one that fails and then recovers, one dead (nothing listens
// there), and one healthy whose endpoint the soak removes halfway. Each records the event ids it was sent.
import { createServer, type Server } from 'node:http';
import { freePort } from './rig.js';

export type ReceiverKind = 'healthy' | 'flaky' | 'dead' | 'removed';

export interface Arrival {
  eventId: string;
  at: number;
}

export class Receiver {
  /** tenant slug -> arrivals. */
  readonly arrivals = new Map<string, Arrival[]>();
  private server?: Server;
  /** Until this time (ms) a flaky receiver answers 503. */
  failUntil = 0;

  private constructor(
    readonly kind: ReceiverKind,
    readonly port: number,
  ) {}

  static async open(kind: ReceiverKind): Promise<Receiver> {
    const receiver = new Receiver(kind, await freePort());
    if (kind === 'dead') return receiver;
    receiver.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (Date.now() < receiver.failUntil) {
          response.writeHead(503).end();
          return;
        }
        const tenant = (request.url ?? '/').split('/')[1] ?? '';
        const eventId = String(request.headers['webhook-id'] ?? '');
        const list = receiver.arrivals.get(tenant) ?? [];
        list.push({ eventId, at: Date.now() });
        receiver.arrivals.set(tenant, list);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((done) => receiver.server!.listen(receiver.port, '127.0.0.1', done));
    return receiver;
  }

  url(tenant: string): string {
    return `http://127.0.0.1:${this.port}/${tenant}`;
  }

  close(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    server.closeAllConnections();
    return new Promise((done) => server.close(() => done()));
  }
}
