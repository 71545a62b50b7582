import { expect } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { PosContract } from '#src/shared/contracts/pos-contract.js';
import { cashRegisterSignature } from '#src/sandbox/pos/pos-cash-register.js';
import type { RunningSandbox } from '#src/sandbox/sandbox.js';
import { CardSandboxClient, type CardResponse } from './card-api.js';

export const posContract = new PosContract();

export interface PosMerchant {
  merchantId: string;
  posKey: string;
  mid: string;
}

export type PosTerminal = Record<string, unknown> & {
  token: string;
  tid: string;
  cash_registry_secret?: string;
};

export interface PosCall {
  /** The POS key (Basic user name, empty password); null sends no Authorization. */
  key: string | null;
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  json?: unknown;
}

export type PosErrorBody = {
  type: number;
  title: string;
  'invalid-params'?: { name: string; reason: string }[];
};

/** The POS side of a test sandbox: merchants and terminals from fixtures, the payer, the API. */
export class PosSandboxClient {
  constructor(readonly card: CardSandboxClient) {}

  static async start(options: { posHoldMs?: number } = {}): Promise<PosSandboxClient> {
    return new PosSandboxClient(await CardSandboxClient.start({ posPort: 0, ...options }));
  }

  get sandbox(): RunningSandbox {
    return this.card.sandbox;
  }

  /** A card merchant with its POS key. */
  async merchant(): Promise<PosMerchant> {
    const { merchantId } = await this.card.merchant();
    const response = await this.card.control('POST', '/sandbox/pos/merchants', { merchantId });
    expect(response.status).toBe(201);
    return response.body as PosMerchant;
  }

  async terminals(
    merchantId: string,
    fixture: Record<string, unknown> = {},
  ): Promise<PosTerminal[]> {
    const response = await this.card.control(
      'POST',
      `/sandbox/pos/merchants/${merchantId}/terminals`,
      fixture,
    );
    expect(response.status).toBe(201);
    return (response.body as { terminals: PosTerminal[] }).terminals;
  }

  async terminal(merchantId: string, fixture: Record<string, unknown> = {}): Promise<PosTerminal> {
    return (await this.terminals(merchantId, fixture))[0];
  }

  /** Waits until the terminal shows a payment (its transaction in flight). */
  async shown(token: string): Promise<string> {
    for (;;) {
      const current = this.sandbox.pos.terminal(token)?.current;
      if (current) return current;
      await sleep(5);
    }
  }

  async payer(token: string, action: 'approve' | 'decline' | 'cancel'): Promise<void> {
    const response = await this.card.control('POST', `/sandbox/pos/terminals/${token}/payer`, {
      action,
    });
    expect(response.status).toBe(200);
  }

  async send<T = Record<string, unknown>>(
    operationId: string,
    call: PosCall,
  ): Promise<CardResponse<T>> {
    const operation = posContract.operation(operationId);
    const path = operation.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
      encodeURIComponent(call.params?.[name] ?? `missing-${name}`),
    );
    const query = call.query
      ? `?${new URLSearchParams(Object.entries(call.query).map(([k, v]): [string, string] => [k, String(v)])).toString()}`
      : '';
    const headers: Record<string, string> = {};
    if (call.key !== null)
      headers.authorization = `Basic ${Buffer.from(`${call.key}:`).toString('base64')}`;
    if (call.json !== undefined) headers['content-type'] = 'application/json';
    const response = await request(`${this.sandbox.posUrl}${path}${query}`, {
      method: operation.method,
      headers,
      body: call.json === undefined ? undefined : JSON.stringify(call.json),
      dispatcher: this.card.agent,
    });
    const text = await response.body.text();
    return {
      status: response.statusCode,
      headers: response.headers,
      body: (text ? JSON.parse(text) : undefined) as T,
    };
  }

  /** Calls an operation and checks its answer against pos.yaml (declared status, body schema). */
  async call<T = Record<string, unknown>>(
    operationId: string,
    call: PosCall,
  ): Promise<CardResponse<T>> {
    const response = await this.send<T>(operationId, call);
    expect({
      operationId,
      problems: posContract.validateResponse(
        operationId,
        response.status,
        response.headers,
        response.body,
      ),
    }).toEqual({ operationId, problems: [] });
    return response;
  }

  /** Expects a refusal with this code, at the status and with the title pos.yaml gives it. */
  async refused(operationId: string, call: PosCall, code: number): Promise<PosErrorBody> {
    const response = await this.call<PosErrorBody>(operationId, call);
    const { status, title } = posContract.error(code);
    expect({
      status: response.status,
      type: response.body.type,
      title: response.body.title,
    }).toEqual({
      status,
      type: code,
      title,
    });
    return response.body;
  }

  close(): Promise<void> {
    return this.card.close();
  }
}

export function payment(
  terminal: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    transaction_id: randomUUID(),
    amount: 1240,
    currency: 'EUR',
    type: 'payment',
    terminal,
    ...fields,
  };
}

/** Cash-register data that match a payment of `paid` cents on the terminal, signed with its secret. */
export function cashRegisterData(terminal: PosTerminal, paid: number): Record<string, string> {
  const total = (paid / 100).toFixed(2);
  const vat = ((paid * 0.24) / 124 / 100).toFixed(2);
  const net = (Number(total) - Number(vat)).toFixed(2);
  const fields: Record<string, string> = {
    uid: `receipt-${randomUUID()}`,
    net_value: net,
    vat_value: vat,
    total_value: total,
    payment_amount: total,
    tid: terminal.tid,
    time_stamp: new Date().toISOString(),
  };
  return {
    ...fields,
    signature: cashRegisterSignature(terminal.cash_registry_secret as string, fields),
  };
}
