import { expect } from '@jest/globals';
import type { CardSandboxClient, Merchant } from './card-api.js';
import { formOf, page } from './card-pages.js';

export type IrisOrder = 'callback-webhook' | 'webhook-callback' | 'webhook-only';

export interface IrisSession {
  token: string;
  signature: string;
  uuid: string;
  md: string;
  amount: number;
  status: string;
  debtorBankUrl: string | null;
}

/** The payer's side of an IRIS session, as a browser would do it without running scripts. */
export class IrisPayer {
  constructor(
    private readonly client: CardSandboxClient,
    private readonly merchant: Merchant,
  ) {}

  /** POST {payform}/api/payment-methods/iris with the public key in the body: the form's payload. */
  async payform(session: { signature: string; amount: number }): Promise<string> {
    const response = await this.client.call<{ data: { payload: string } }>('createIrisPayform', {
      key: null,
      form: {
        amount: session.amount,
        pk: this.merchant.publicKey,
        token: session.signature,
        currency: 'EUR',
      },
    });
    expect(response.status).toBe(200);
    return response.body.data.payload;
  }

  /** Opens the bank page from the payform's payload and answers it; the page the bank answers. */
  async decide(
    session: { signature: string; amount: number },
    decision: 'approve' | 'refuse' | 'cancel',
  ): Promise<{ status: number; html: string }> {
    const payload = formOf(await this.payform(session));
    const bank = await page(payload.action, payload.fields);
    expect(bank.status).toBe(200);
    return page(`${payload.action}/decision`, { decision });
  }

  /** Chooses how the result arrives (the sandbox control). */
  async plan(sessionId: string, order: IrisOrder, copies = 1, holdMs = 60_000): Promise<void> {
    const response = await this.client.control(
      'PUT',
      `/sandbox/card/iris/sessions/${sessionId}/delivery`,
      { order, copies, holdMs },
    );
    expect(response.status).toBe(204);
  }

  async release(sessionId: string): Promise<boolean> {
    const response = await this.client.control(
      'POST',
      `/sandbox/card/iris/sessions/${sessionId}/release`,
    );
    return (response.body as { released: boolean }).released;
  }

  async webhookAttempts(
    sessionId: string,
  ): Promise<{ copy: number; attempt: number; status: number }[]> {
    const response = await this.client.control(
      'GET',
      `/sandbox/card/iris/sessions/${sessionId}/webhooks`,
    );
    return (response.body as { attempts: { copy: number; attempt: number; status: number }[] })
      .attempts;
  }
}
