import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  /** The request's path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered (undefined: it held the request open). */
  answered?: number;
}

/** What the receiver does with a request: answer a status, or hold it open until closed. */
export type Behaviour = (request: Received, seenBefore: number) => number | 'hang';

/** A plain node HTTP server the test runs, standing for the app's webhook endpoint. */
export class Receiver {
  readonly received: Received[] = [];
  behaviour: Behaviour = () => 200;
  /** Headers sent with every answer (e.g. Retry-After). */
  answerHeaders: Record<string, string> = {};
  private readonly waiters: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const self: { receiver?: Receiver } = {};
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: Received = {
          path: request.url ?? '',
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        const id = request.headers['webhook-id'];
        const seenBefore = self.receiver!.received.filter(
          (r) => r.headers['webhook-id'] === id,
        ).length;
        self.receiver!.received.push(received);
        const answer = self.receiver!.behaviour(received, seenBefore);
        if (answer !== 'hang') {
          received.answered = answer;
          response
            .writeHead(answer, { 'content-type': 'text/plain', ...self.receiver!.answerHeaders })
            .end('ok');
        }
        self.receiver!.waiters.splice(0).forEach((wake) => wake());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self.receiver = new Receiver(server, `http://127.0.0.1:${port}/hooks`);
    return self.receiver;
  }

  /** The bodies received, parsed. */
  events(): { id: string; type: string; data: Record<string, unknown> }[] {
    return this.received.map((r) => ({
      id: String(r.headers['webhook-id']),
      ...(JSON.parse(r.body) as { type: string; data: Record<string, unknown> }),
    }));
  }

  /** Resolves once a request satisfies the condition (checked on each arrival), or rejects. */
  async until(condition: () => boolean, limitMs = 20_000): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error('the receiver did not see what was expected');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A Standard Webhooks verifier written from the specification (not Portico's code): the signed content
 * is `{webhook-id}.{webhook-timestamp}.{body}`, HMAC-SHA256 keyed with the base64-decoded secret after
 * `whsec_`; `webhook-signature` is a space-separated list of `v1,<base64>`; the timestamp must be within
 * the tolerance; signatures are compared in constant time.
 */
export function verifyStandardWebhook(
  secret: string,
  headers: IncomingHttpHeaders,
  body: string,
  toleranceSeconds = 300,
): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string')
    return false;
  if (!/^\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  if (!secret.startsWith('whsec_')) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',');
    if (version !== 'v1' || !signature) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
