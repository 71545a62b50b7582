import { expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { CardContract } from '#src/shared/contracts/card-contract.js';
import { encodeForm } from '#src/upstreams/http/form-encoding.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';

export const cardContract = new CardContract();

export interface Merchant {
  merchantId: string;
  secretKey: string;
  publicKey: string;
}

export interface CardResponse<T = Record<string, unknown>> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
}

export interface CardCall {
  /** The API key (sent as the Basic user name with an empty password); null sends no Authorization. */
  key: string | null;
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  /** A form body: an object (encoded with numeric indices and brackets) or the raw text. */
  form?: Record<string, unknown> | string;
  headers?: Record<string, string>;
}

const errorCodeOf = (body: unknown) => (body as { error?: { code?: number } }).error?.code;

/** A sandbox for card tests (every port free, state in memory) and a TLS client trusting its CA. */
export class CardSandboxClient {
  readonly agent = new Agent({
    connect: { ca: readFileSync('certs/dev/ca.pem') },
    keepAliveTimeout: 1000,
  });

  private constructor(readonly sandbox: RunningSandbox) {}

  static async start(
    options: Partial<Parameters<typeof startSandbox>[0]> = {},
  ): Promise<CardSandboxClient> {
    const sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
      cardPort: 0,
      ...options,
    });
    return new CardSandboxClient(sandbox);
  }

  /** POST /sandbox/card/merchants on the control listener. */
  async merchant(name?: string): Promise<Merchant> {
    const response = await this.control('POST', '/sandbox/card/merchants', name ? { name } : {});
    expect(response.status).toBe(201);
    return response.body as Merchant;
  }

  /** POST /sandbox/card/clock. */
  async advanceClock(advanceSeconds: number): Promise<string> {
    const response = await this.control('POST', '/sandbox/card/clock', { advanceSeconds });
    expect(response.status).toBe(200);
    return (response.body as { now: string }).now;
  }

  async control(method: string, path: string, json?: unknown): Promise<CardResponse<unknown>> {
    const response = await request(`${this.sandbox.scaUrl}${path}`, {
      method: method as 'POST',
      headers: json === undefined ? {} : { 'content-type': 'application/json' },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      headers: response.headers,
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
  }

  /** Calls one operation of card.yaml without checking the answer. */
  async send<T = Record<string, unknown>>(
    operationId: string,
    call: CardCall,
  ): Promise<CardResponse<T>> {
    const operation = cardContract.operation(operationId);
    const path = operation.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
      encodeURIComponent(call.params?.[name] ?? `missing-${name}`),
    );
    const query = call.query
      ? `?${new URLSearchParams(Object.entries(call.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`
      : '';
    return this.raw<T>(operation.method, `${path}${query}`, call);
  }

  /** Any request to the card listener. */
  async raw<T = Record<string, unknown>>(
    method: string,
    pathAndQuery: string,
    call: CardCall,
  ): Promise<CardResponse<T>> {
    const headers: Record<string, string> = { ...call.headers };
    if (call.key !== null)
      headers.authorization = `Basic ${Buffer.from(`${call.key}:`).toString('base64')}`;
    let body: string | undefined;
    if (call.form !== undefined) {
      body = typeof call.form === 'string' ? call.form : encodeForm(call.form);
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    const response = await request(`${this.sandbox.cardUrl}${pathAndQuery}`, {
      method: method as 'POST',
      headers,
      body,
      dispatcher: this.agent,
    });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      headers: response.headers,
      body: (text ? JSON.parse(text) : undefined) as T,
    };
  }

  /**
   * Calls one operation and checks the answer with the contract's own validator (the one the gateway
   * applies to the provider's answers): a declared status and a body matching its schema.
   */
  async call<T = Record<string, unknown>>(
    operationId: string,
    call: CardCall,
  ): Promise<CardResponse<T>> {
    const response = await this.send<T>(operationId, call);
    expect({
      operationId,
      status: response.status,
      problems: cardContract.validateResponse(
        operationId,
        response.status,
        response.headers,
        response.body,
      ),
    }).toEqual({ operationId, status: response.status, problems: [] });
    return response;
  }

  /** Calls an operation expecting a refusal with this status and code (the answer checked too). */
  async refused(
    operationId: string,
    call: CardCall,
    status: number,
    code: number,
  ): Promise<CardResponse<{ error: { status: number; code: number; message: string } }>> {
    const response = await this.call<{ error: { status: number; code: number; message: string } }>(
      operationId,
      call,
    );
    expect({ status: response.status, code: errorCodeOf(response.body) }).toEqual({ status, code });
    expect(response.body.error.status).toBe(status);
    return response;
  }

  async close(): Promise<void> {
    await this.agent.close();
    await this.sandbox.close();
  }
}

/** Card arguments of a test card, expiring in two years. */
export function cardFields(number = '5217925525906273', cvv = '123'): Record<string, string> {
  return {
    card_number: number,
    expiration_month: '12',
    expiration_year: String(new Date().getUTCFullYear() + 2),
    holder_name: 'Maria Papadopoulou',
    cvv,
  };
}
