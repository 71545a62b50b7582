import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { blockedAddress, type WebhookMode } from './webhook-url-policy.js';

export interface SendResult {
  /** The receiver's status code, when it answered. */
  status?: number;
  /** Why there is no 2xx: the network error, the timeout, or the status. */
  error?: string;
  timedOut: boolean;
  latencyMs: number;
  /** The receiver's Retry-After (429, 503), in milliseconds from now. */
  retryAfterMs?: number;
}

/** Retry-After as delay-seconds or an HTTP date, in milliseconds from now; undefined when unreadable. */
export function retryAfterMs(
  header: string | string[] | undefined,
  now = Date.now(),
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** A DNS lookup that refuses (in production) a host name resolving to a refused address. */
function guardedLookup(mode: WebhookMode): LookupFunction | undefined {
  if (mode === 'sandbox') return undefined;
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const list: LookupAddress[] = addresses;
      const refused = list.find((entry) => blockedAddress(entry.address));
      if (refused)
        return callback(
          Object.assign(new Error(`${hostname} resolves to refused address ${refused.address}`), {
            code: 'EWEBHOOKADDRESS',
          }),
          '',
          4,
        );
      if (options.all) return callback(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}

/**
 * One POST of the body to the URL: no redirects followed (3xx is a failure), the whole attempt bounded
 * by timeoutMs, the answer's body read and dropped (at most 64 KiB).
 */
export function sendWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; mode: WebhookMode },
): Promise<SendResult> {
  const started = performance.now();
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: Math.round(performance.now() - started) });
    };
    const requestOptions: RequestOptions = {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'Portico-Webhooks/1',
      },
      lookup: guardedLookup(options.mode),
      agent: false,
    };
    const request = send(target, requestOptions, (response) => {
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > 65_536) response.destroy();
      });
      const status = response.statusCode ?? 0;
      const waitMs =
        status === 429 || status === 503
          ? retryAfterMs(response.headers['retry-after'])
          : undefined;
      const done = () =>
        finish({
          status,
          timedOut: false,
          error: status >= 200 && status < 300 ? undefined : `answered ${status}`,
          ...(waitMs === undefined ? {} : { retryAfterMs: waitMs }),
        });
      response.on('end', done);
      response.on('close', done);
      response.on('error', done);
    });
    const timer = setTimeout(() => {
      finish({ timedOut: true, error: `no answer within ${options.timeoutMs} ms` });
      request.destroy();
    }, options.timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish({ timedOut: false, error: `${error.code ?? 'error'}: ${error.message}` }),
    );
    request.end(body);
  });
}
