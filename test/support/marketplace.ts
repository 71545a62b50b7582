import { expect } from '@jest/globals';
import { cardFields, type CardSandboxClient, type Merchant } from './card-api.js';

/** An IBAN with valid check digits for a country and BBAN (ISO 13616). */
export function ibanOf(country: string, bban: string): string {
  const digits = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  let remainder = 0;
  for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  return `${country}${String(98 - remainder).padStart(2, '0')}${bban}`;
}

/** The nine required fields of a seller (card.yaml CreateSellerForm). */
export function sellerForm(n = 1, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    email: `seller${n}@shop.example`,
    contact_phone: '+306900000000',
    description: `Seller ${n}`,
    business_name: `Business ${n}`,
    business_title: `Business ${n} S.A.`,
    business_tax_number: `EL${String(100000000 + n)}`,
    business_address: `Ermou ${n}, Athens`,
    bank_account_iban: ibanOf('GR', `0140125${String(n).padStart(16, '0')}`),
    bank_account_beneficiary: `Business ${n}`,
    ...extra,
  };
}

export type Json = Record<string, unknown>;

/** One marketplace merchant of a sandbox, with short calls for the marketplace operations. */
export class Marketplace {
  constructor(
    readonly client: CardSandboxClient,
    readonly merchant: Merchant,
  ) {}

  static async open(client: CardSandboxClient): Promise<Marketplace> {
    return new Marketplace(client, await client.merchant());
  }

  async ok(operationId: string, call: { params?: Json; query?: Json; form?: Json } = {}) {
    const response = await this.client.call<Json>(operationId, {
      key: this.merchant.secretKey,
      ...(call as object),
    });
    expect({ operationId, status: response.status, body: response.body }).toMatchObject({
      status: 200,
    });
    return response.body as Json & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  }

  async refused(
    operationId: string,
    call: { params?: Json; form?: Json },
    status: number,
    code: number,
  ) {
    const response = await this.client.refused(
      operationId,
      { key: this.merchant.secretKey, ...(call as object) },
      status,
      code,
    );
    return response.body.error;
  }

  seller(n = 1, extra: Json = {}) {
    return this.ok('createSeller', { form: sellerForm(n, extra) });
  }

  /** A captured split payment (or `extra` to vary it). */
  payment(amount: number, extra: Json = {}) {
    return this.ok('createPayment', { form: { amount, split: 1, ...cardFields(), ...extra } });
  }

  transfer(payment: string, form: Json) {
    return this.ok('createPaymentTransfer', {
      params: { paymentId: payment },
      form: { description: 'Order share', ...form },
    });
  }

  direct(seller: string, type: 'debit' | 'credit', amount: number) {
    return this.ok('createSellerTransfer', {
      params: { sellerId: seller },
      form: { type, amount, description: `${type} ${amount}` },
    });
  }

  async balance() {
    return (await this.ok('retrieveBalance')).marketplace as {
      available_amount: number;
      current_amount: number;
    };
  }

  async sellerBalance(seller: string) {
    return (await this.ok('retrieveSellerBalance', { params: { sellerId: seller } }))
      .available_amount as number;
  }

  async option(transferAboveRemaining: boolean) {
    const answer = await this.client.control('POST', '/sandbox/card/marketplace/options', {
      merchantId: this.merchant.merchantId,
      transferAboveRemaining,
    });
    expect(answer.status).toBe(200);
  }

  async sellerStatus(seller: string, status: string) {
    const answer = await this.client.control(
      'POST',
      `/sandbox/card/marketplace/sellers/${seller}/status`,
      { status },
    );
    return answer.status;
  }

  /** Runs the payout scheduler for this merchant on a day (YYYY-MM-DD). */
  async runPayouts(date: string) {
    const answer = await this.client.control('POST', '/sandbox/card/marketplace/payouts/run', {
      date,
      merchantId: this.merchant.merchantId,
    });
    expect(answer).toMatchObject({ status: 200 });
    return answer.body as { date: string; deposited: string[]; created: string[] };
  }

  async invariants() {
    const answer = await this.client.control(
      'GET',
      `/sandbox/card/marketplace/invariants?merchantId=${this.merchant.merchantId}`,
    );
    return answer.body as { ok: boolean; violations: string[] };
  }
}

/** The sandbox clock's day, and the first day after it for which `accept` holds. */
export async function nextDay(
  client: CardSandboxClient,
  accept: (date: Date) => boolean = () => true,
): Promise<string> {
  const now = (await client.control('GET', '/sandbox/card/clock')).body as { now: string };
  const day = new Date(`${now.now.slice(0, 10)}T00:00:00Z`);
  for (;;) {
    day.setUTCDate(day.getUTCDate() + 1);
    if (accept(day)) return day.toISOString().slice(0, 10);
  }
}
