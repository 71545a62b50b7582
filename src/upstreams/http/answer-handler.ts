import type { Dispatcher } from 'undici';
import { errors } from './undici-parts.js';

/** An answer's status and headers as they arrive, and its body read to the end. */
export interface DispatchedAnswer {
  statusCode: number;
  headers: Record<string, string | string[]>;
  /** The whole body as text (UTF-8, a byte-order mark dropped); rejects when it breaks off or stalls. */
  text(): Promise<string>;
}

type AbortSource = {
  aborted: boolean;
  reason?: unknown;
} & (
  | {
      once(event: 'abort', listener: () => void): unknown;
      removeListener(event: 'abort', listener: () => void): unknown;
    }
  | {
      addEventListener(event: 'abort', listener: () => void, options: { once: true }): void;
      removeEventListener(event: 'abort', listener: () => void): void;
    }
);

/**
 * Sends one request on a dispatcher and gathers its answer: undici's `request` without the Readable
 * stream, the async resource and the promise per step it puts around the body, which cost more than
 * reading a small JSON answer. It resolves at the headers, as `request` does; the body is gathered as
 * it arrives and handed over whole by `text()`. The signal (the call's deadline) ends the request
 * before the headers and the body after them alike.
 */
export function dispatchRequest(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal?: AbortSource,
): Promise<DispatchedAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    let answered = false;
    let body: {
      text?: string;
      error?: unknown;
      waiting?: [(text: string) => void, (error: unknown) => void];
    } = {};
    let abort: ((reason: Error) => void) | undefined;
    let stop: (() => void) | undefined;
    const reasonOf = () => (signal?.reason ?? new errors.RequestAbortedError()) as Error;
    if (signal && !signal.aborted) {
      const onAbort = () => abort?.(reasonOf());
      if ('addEventListener' in signal) {
        signal.addEventListener('abort', onAbort, { once: true });
        stop = () => signal.removeEventListener('abort', onAbort);
      } else {
        signal.once('abort', onAbort);
        stop = () => signal.removeListener('abort', onAbort);
      }
    }
    const settle = (text: string | undefined, error?: unknown) => {
      stop?.();
      body = text === undefined ? { error } : { text };
    };
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abortRequest) {
        abort = abortRequest;
        if (signal?.aborted) abortRequest(reasonOf());
      },
      onHeaders(statusCode, rawHeaders) {
        if (statusCode < 200) return true;
        answered = true;
        resolve({ statusCode, headers: parseHeaders(rawHeaders as Buffer[]), text: readText });
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        length += chunk.length;
        return true;
      },
      onComplete() {
        const waiting = body.waiting;
        settle(decode(chunks, length));
        waiting?.[0](body.text!);
      },
      onError(error) {
        const waiting = body.waiting;
        settle(undefined, error);
        if (!answered) reject(error);
        else waiting?.[1](error);
      },
    };
    const readText = (): Promise<string> => {
      if (body.text !== undefined) return Promise.resolve(body.text);
      if ('error' in body) return Promise.reject(body.error);
      return new Promise((done, fail) => {
        body.waiting = [done, fail];
      });
    };
    dispatcher.dispatch(options, handler);
  });
}

/** Header names in lower case, values as Latin-1 text, a repeated header as a list (as undici's `request`). */
function parseHeaders(raw: Buffer[]): Record<string, string | string[]> {
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    const known = headers[name];
    if (known === undefined) headers[name] = value;
    else if (Array.isArray(known)) known.push(value);
    else headers[name] = [known, value];
  }
  return headers;
}

/** The body's bytes as UTF-8 text, a leading byte-order mark dropped (as undici's `text()`). */
function decode(chunks: Buffer[], length: number): string {
  if (length === 0) return '';
  const buffer = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
  const start =
    buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start);
}
