import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection after the answer. */
  closed: boolean;
}

/**
 * Sends bytes exactly as given on a new TCP connection and reads one HTTP/1.1 answer (by Content-Length,
 * or until the server closes). For requests that no HTTP client would send.
 */
export function rawRequest(
  port: number,
  bytes: string | Buffer,
  timeoutMs = 10_000,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let settled = false;
    // A bound, not a measurement: a server still waiting for bytes would otherwise hold the test.
    socket.setTimeout(timeoutMs, () => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(new Error(`no complete answer in ${timeoutMs} ms`));
    });
    let received = Buffer.alloc(0);
    const finish = (closed: boolean) => {
      if (settled) return;
      // Interim answers (100 Continue) come before the one that counts.
      while (/^HTTP\/1\.[01] 1\d\d /.test(received.toString('latin1', 0, 13))) {
        const end = received.indexOf('\r\n\r\n');
        if (end < 0) return;
        received = received.subarray(end + 4);
      }
      const text = received.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        if (closed) {
          settled = true;
          reject(new Error(`no HTTP answer before close: ${JSON.stringify(text.slice(0, 200))}`));
        }
        return;
      }
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = received.subarray(Buffer.byteLength(text.slice(0, split + 4)));
      const length = headers['content-length'];
      if (!closed && (length === undefined || body.length < Number(length))) return;
      // Whatever follows belongs to a next answer on the same connection.
      if (length !== undefined) body = body.subarray(0, Number(length));
      settled = true;
      socket.destroy();
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: body.toString('utf8'),
        closed,
      });
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error) => {
      if (received.length > 0) finish(true);
      else if (!settled) {
        settled = true;
        reject(error);
      }
    });
    socket.write(bytes);
  });
}

/** Everything a server wrote on one connection, and whether it closed it. */
export interface Transcript {
  /** The bytes received, as text. */
  text: string;
  /** The status of each HTTP answer in the bytes (a status line at the start of the stream or after a body). */
  statuses: number[];
  closed: boolean;
}

/**
 * Writes `parts` one after another on one connection, each once the server has written something since the
 * previous one (or after `settleMs` without a word), then waits `settleMs` more (or for the close) and returns
 * all the server wrote. For the order in which a server answers and reads a request.
 */
export function rawConversation(
  port: number,
  parts: (string | Buffer)[],
  settleMs = 300,
): Promise<Transcript> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = Buffer.alloc(0);
    let closed = false;
    let waiting: (() => void) | undefined;
    const quiet = () =>
      new Promise<void>((done) => {
        const timer = setTimeout(() => {
          waiting = undefined;
          done();
        }, settleMs);
        waiting = () => {
          clearTimeout(timer);
          waiting = undefined;
          done();
        };
      });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      waiting?.();
    });
    socket.on('close', () => {
      closed = true;
      waiting?.();
    });
    socket.on('error', () => undefined);
    void (async () => {
      for (const part of parts) {
        if (closed) break;
        const answered = quiet();
        socket.write(part);
        await answered;
      }
      if (!closed) await quiet();
      // Any further bytes would have come within settleMs of the last ones.
      if (!closed) await quiet();
      socket.destroy();
      const text = received.toString('latin1');
      const statuses = [...text.matchAll(/(?:^|\r\n|\})HTTP\/1\.[01] (\d{3}) /g)].map((m) =>
        Number(m[1]),
      );
      resolve({ text, statuses, closed });
    })().catch(reject);
  });
}
