import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { oneSourceRuleOf } from '#src/shared/contracts/one-source.js';
import {
  CardSandboxClient,
  cardContract,
  cardFields,
  type Merchant,
} from '../../support/card-api.js';

// card.yaml's `x-portico-one-source` is what the gateway refuses before calling (test/card/
// provider-constraints.test.ts); the sandbox, the provider here, must answer a form with neither
// source and one with both with the codes it states.
const ruled = cardContract.operations
  .map((operation) => ({
    operation,
    rule: oneSourceRuleOf(cardContract.schemas, operation.requestBodySchema),
  }))
  .filter((entry) => entry.rule !== undefined);

describe("the sandbox answers a card form's source as card.yaml's x-portico-one-source says", () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  let customerId: string;
  /** What each ruled operation needs besides its source (a new ruled operation must be added here). */
  const rest: Record<
    string,
    () => { form: Record<string, unknown>; params?: Record<string, string> }
  > = {
    createPayment: () => ({ form: { amount: 1000 } }),
    createCustomer: () => ({ form: { full_name: 'One Source' } }),
    createCustomerCard: () => ({ form: {}, params: { customerId } }),
  };

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant();
    const { cvv: _cvv, ...card } = cardFields();
    customerId = (
      await client.call<{ token: string }>('createCustomer', {
        key: merchant.secretKey,
        form: card,
      })
    ).body.token;
  });
  afterAll(() => client.close());

  it('finds the rule on every form that takes a card or a token', () => {
    expect(ruled.map((entry) => entry.operation.operationId).sort()).toEqual(
      Object.keys(rest).sort(),
    );
  });

  it.each(ruled.map((entry) => [entry.operation.operationId, entry.rule!] as const))(
    '%s: neither source and both sources are refused with the stated codes',
    async (operationId, rule) => {
      const { form, params } = rest[operationId]();
      const neither = await client.refused(
        operationId,
        { key: merchant.secretKey, form, params },
        400,
        rule.neither,
      );
      if (rule.neitherField) expect(neither.body.error.message).toContain(rule.neitherField);
      await client.refused(
        operationId,
        { key: merchant.secretKey, form: { ...form, ...cardFields(), token: 'ctn_x' }, params },
        400,
        rule.both,
      );
    },
  );
});
