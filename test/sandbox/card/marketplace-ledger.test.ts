import { describe, expect, it } from '@jest/globals';
import { CardError } from '#src/sandbox/card/card-context.js';
import { CardSandbox } from '#src/sandbox/card/card-sandbox.js';
import { ledgerViolations } from '#src/sandbox/card/marketplace/invariants.js';
import { marketOf } from '#src/sandbox/card/marketplace/ledger.js';
import { runPayouts } from '#src/sandbox/card/marketplace/payouts.js';
import { SeededRandom } from '#src/sandbox/open-banking/bank/seeded-random.js';
import { cardFields } from '../../support/card-api.js';
import { sellerForm } from '../../support/marketplace.js';

/** Sequences run, and operations per sequence; MARKETPLACE_SEED replays one sequence. */
const SEQUENCES = 300;
const STEPS = 60;

type Body = Record<string, unknown>;

/**
 * Random sequences of payments (split, pre-authorised, captured), splits, direct transfers, holds,
 * refunds, reversals, seller status changes, the account option and scheduler runs on one in-process
 * sandbox merchant: after every step every ledger invariant holds (movements add up to 0, balances
 * equal their entries and the resources, none negative), and no step fails with a 500.
 */
function runSequence(seed: number) {
  const random = new SeededRandom(seed);
  const sut = new CardSandbox({ now: () => new Date('2027-03-01T09:00:00Z') });
  const { merchantId } = sut.provisionMerchant();
  const pick = <T>(items: readonly T[]): T | undefined =>
    items.length === 0 ? undefined : items[random.between(0, items.length - 1)];
  const sellers: string[] = [];
  const payments: string[] = [];
  const transfers: string[] = [];
  const steps: string[] = [];
  const succeeded = new Set<string>();
  let refusals = 0;
  let payouts = 0;

  const call = (operationId: string, body: Body = {}, params: Record<string, string> = {}) => {
    const answer = sut.handle(merchantId, { operationId, params, query: {}, body });
    if (answer instanceof CardError) {
      if (answer.status >= 500)
        throw new Error(`step ${steps.length} ${operationId}: ${answer.code}`);
      refusals++;
      return undefined;
    }
    succeeded.add(operationId);
    return answer.body as Body & { token: string };
  };

  for (let n = 0; n < 3; n++)
    sellers.push(
      call('createSeller', {
        ...sellerForm(n + 1),
        payout_threshold_amount: pick([0, 0, 500, 5_000]),
      })!.token,
    );

  for (let step = 0; step < STEPS; step++) {
    const action = pick([
      'pay',
      'pay',
      'preauth',
      'capture',
      'split',
      'split',
      'split',
      'credit',
      'debit',
      'hold',
      'release',
      'refund',
      'reverse',
      'reverse',
      'run',
      'status',
      'option',
    ] as const)!;
    steps.push(action);
    const amount = random.between(30, 20_000);
    const payment = pick(payments);
    const transfer = pick(transfers);
    const seller = pick(sellers)!;
    switch (action) {
      case 'pay':
      case 'preauth': {
        const made = call('createPayment', {
          amount,
          split: random.next() < 0.85 ? 1 : 0,
          capture: action === 'preauth' ? 0 : 1,
          ...cardFields(),
          cvv: '123',
        });
        if (made) payments.push(made.token);
        break;
      }
      case 'capture':
        if (payment) call('capturePayment', {}, { paymentId: payment });
        break;
      case 'split': {
        if (!payment) break;
        const splitAmount = random.between(1, 12_000);
        const made = call(
          'createPaymentTransfer',
          {
            seller,
            amount: splitAmount,
            commission_amount: random.between(0, splitAmount),
            description: 'split',
            on_hold: random.next() < 0.25 ? 1 : 0,
          },
          { paymentId: payment },
        );
        if (made) transfers.push(made.token);
        break;
      }
      case 'credit':
      case 'debit': {
        const made = call(
          'createSellerTransfer',
          { type: action, amount: random.between(1, 5_000), description: action },
          { sellerId: seller },
        );
        if (made) transfers.push(made.token);
        break;
      }
      case 'hold':
      case 'release':
        if (transfer)
          call('updateTransfer', { on_hold: action === 'hold' ? 1 : 0 }, { transferId: transfer });
        break;
      case 'refund':
        if (payment)
          call('createRefund', {
            payment,
            ...(random.next() < 0.5 ? { amount: random.between(1, 10_000) } : {}),
          });
        break;
      case 'reverse': {
        if (!transfer) break;
        const body: Body = { transfer };
        if (random.next() < 0.6) body.amount = random.between(1, 6_000);
        if (random.next() < 0.3) body.commission_amount = random.between(0, 2_000);
        if (random.next() < 0.3) body.refund_commission = random.between(0, 1);
        call('createReversal', body);
        break;
      }
      case 'run': {
        sut.advanceClock(random.between(0, 3) * 86_400);
        const day = sut.now().toISOString().slice(0, 10);
        const [run] = sut.forMerchants((context) => runPayouts(context, day), merchantId);
        payouts += run.created.length;
        break;
      }
      case 'status':
        sut.forMerchants((context) => {
          const record = context.book.sellers.get(seller)!;
          if (record.status !== 'Closed')
            record.status = pick(['Authorized', 'Authorized', 'Suspended', 'Closed'] as const)!;
        }, merchantId);
        break;
      case 'option':
        sut.forMerchants((context) => {
          marketOf(context).transferAboveRemaining = random.next() < 0.5;
        }, merchantId);
        break;
    }
    const [violations] = sut.forMerchants(ledgerViolations, merchantId);
    if (violations.length > 0)
      throw new Error(`seed ${seed}, step ${step} (${steps.join(' ')}): ${violations.join('; ')}`);
  }
  return { steps, refusals, payouts, succeeded };
}

describe('sandbox marketplace ledger: property-style random sequences', () => {
  it(`keeps every invariant and no balance negative over ${SEQUENCES} seeded sequences of ${STEPS} steps`, () => {
    const only = process.env.MARKETPLACE_SEED;
    const seeds = only ? [Number(only)] : Array.from({ length: SEQUENCES }, (_, i) => 1_000 + i);
    let payouts = 0;
    let refusals = 0;
    const kinds = new Set<string>();
    const succeeded = new Set<string>();
    for (const seed of seeds) {
      const run = runSequence(seed);
      payouts += run.payouts;
      refusals += run.refusals;
      run.steps.forEach((step) => kinds.add(step));
      run.succeeded.forEach((operationId) => succeeded.add(operationId));
    }
    // The sequences did reach every kind of step, payouts and refusals included.
    expect(kinds.size).toBe(13);
    expect([...succeeded].sort()).toEqual([
      'capturePayment',
      'createPayment',
      'createPaymentTransfer',
      'createRefund',
      'createReversal',
      'createSeller',
      'createSellerTransfer',
      'updateTransfer',
    ]);
    expect(payouts).toBeGreaterThan(SEQUENCES / 2);
    expect(refusals).toBeGreaterThan(0);
  });

  it('reports a broken ledger (the check can fail)', () => {
    const sut = new CardSandbox();
    const { merchantId } = sut.provisionMerchant();
    sut.handle(merchantId, {
      operationId: 'createPayment',
      params: {},
      query: {},
      body: { amount: 1_000, split: 1, ...cardFields() },
    });
    const [violations] = sut.forMerchants((context) => {
      marketOf(context).current += 1;
      return ledgerViolations(context);
    }, merchantId);
    expect(violations).toEqual(
      expect.arrayContaining([
        'marketplace current vs entries: 1001, expected 1000',
        'marketplace current vs split payments: 1001, expected 1000',
      ]),
    );
  });
});
