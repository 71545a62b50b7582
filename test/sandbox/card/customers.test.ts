import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';

type Card = { token: string; last_four: string; customer?: string };
type Customer = {
  token: string;
  is_active: boolean;
  email: string | null;
  full_name: string | null;
  card: Card;
  cards: { count: number; data: Card[] };
};
type Payment = {
  token: string;
  status: string;
  card: Card;
  mandate?: string;
  mandate_reference?: string;
  payee_email: string | null;
};
type Mandate = {
  token: string;
  status: string;
  mandate_reference: string | null;
  date_created: string;
};
type List<T> = { total_count: number; items: T[] };

const storable = (number = '5217925525906273') => {
  const { cvv: _cvv, ...fields } = cardFields(number);
  return fields;
};

describe('sandbox card API: customers and their cards', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const key = () => merchant.secretKey;
  const newCustomer = async (
    form: Record<string, unknown> = {
      ...storable(),
      full_name: 'Maria P',
      email: 'maria@example.com',
    },
  ) => (await client.call<Customer>('createCustomer', { key: key(), form })).body;
  const addCard = async (customerId: string, number: string, defaultCard?: 0 | 1) =>
    (
      await client.call<Card>('createCustomerCard', {
        key: key(),
        params: { customerId },
        form: {
          ...storable(number),
          ...(defaultCard === undefined ? {} : { default_card: defaultCard }),
        },
      })
    ).body;
  const read = async (customerId: string) =>
    (await client.call<Customer>('retrieveCustomer', { key: key(), params: { customerId } })).body;

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant();
  });
  afterAll(() => client.close());

  it('stores a customer from card fields without a cvv; its card is the default', async () => {
    const customer = await newCustomer();
    expect(customer).toMatchObject({
      is_active: true,
      full_name: 'Maria P',
      email: 'maria@example.com',
    });
    expect(customer.token).toMatch(/^cus_/);
    expect(customer.card).toMatchObject({ last_four: '6273', customer: customer.token });
    expect(customer.cards.count).toBe(1);
  });

  it('stores a customer from a card token, which is then used up', async () => {
    const token = (
      await client.call<{ token: string }>('createCardToken', {
        key: merchant.publicKey,
        form: cardFields('4556390755719395'),
      })
    ).body;
    const customer = await newCustomer({ token: token.token });
    expect(customer.card.last_four).toBe('9395');
    await client.refused(
      'createCustomer',
      { key: key(), form: { token: token.token } },
      400,
      20007,
    );
  });

  it('needs exactly one of card fields or a token, and checks e-mail and names', async () => {
    await client.refused(
      'createCustomer',
      { key: key(), form: { full_name: 'No card' } },
      400,
      20001,
    );
    await client.refused(
      'createCustomer',
      { key: key(), form: { ...storable(), token: 'ctn_x' } },
      400,
      40001,
    );
    await client.refused(
      'createCustomer',
      { key: key(), form: { ...storable(), email: 'not-an-email' } },
      400,
      30002,
    );
    await client.refused(
      'createCustomer',
      { key: key(), form: { ...storable(), full_name: 'x'.repeat(256) } },
      400,
      30001,
    );
    await client.refused(
      'createCustomer',
      { key: key(), form: { ...storable(), description: 'x'.repeat(256) } },
      400,
      30003,
    );
  });

  it('charges an active customer on its default card or a chosen card', async () => {
    const customer = await newCustomer();
    const second = await addCard(customer.token, '4556390755719395');
    const byDefault = await client.call<Payment>('createPayment', {
      key: key(),
      form: { amount: 700, token: customer.token },
    });
    expect(byDefault.body.card.token).toBe(customer.card.token);
    expect(byDefault.body.payee_email).toBe('maria@example.com');
    const chosen = await client.call<Payment>('createPayment', {
      key: key(),
      form: { amount: 700, token: customer.token, card: second.token },
    });
    expect(chosen.body.card.token).toBe(second.token);
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 700, token: customer.token, card: 'crd_unknown' } },
      400,
      30008,
    );
  });

  it('updates a customer and changes the default card with card + default_card=1', async () => {
    const customer = await newCustomer();
    const second = await addCard(customer.token, '4556390755719395');
    expect((await read(customer.token)).card.token).toBe(customer.card.token);
    const updated = await client.call<Customer>('updateCustomer', {
      key: key(),
      params: { customerId: customer.token },
      form: { email: 'new@example.com', card: second.token, default_card: 1 },
    });
    expect(updated.body).toMatchObject({
      email: 'new@example.com',
      full_name: 'Maria P',
      card: { token: second.token },
    });
    await client.refused(
      'updateCustomer',
      {
        key: key(),
        params: { customerId: customer.token },
        form: { card: 'crd_unknown', default_card: 1 },
      },
      400,
      30008,
    );
  });

  it('adds a card as the default with default_card=1, lists, reads and deletes cards', async () => {
    const customer = await newCustomer();
    const added = await addCard(customer.token, '4556390755719395', 1);
    expect((await read(customer.token)).card.token).toBe(added.token);
    const listed = await client.call<List<Card>>('listCustomerCards', {
      key: key(),
      params: { customerId: customer.token },
    });
    expect(listed.body.items.map((c) => c.token)).toEqual([added.token, customer.card.token]);
    const one = await client.call<Card>('retrieveCustomerCard', {
      key: key(),
      params: { customerId: customer.token, cardId: added.token },
    });
    expect(one.body).toMatchObject({ token: added.token, customer: customer.token });
    await client.refused(
      'retrieveCustomerCard',
      { key: key(), params: { customerId: customer.token, cardId: 'crd_unknown' } },
      400,
      30008,
    );
  });

  it('deleting the default card makes the most recently added card the default; the last card cannot go (30010)', async () => {
    const customer = await newCustomer();
    const second = await addCard(customer.token, '4556390755719395');
    const third = await addCard(customer.token, '4111111111111111');
    // The first card is still the default; make the second the default, then delete it.
    await client.call('updateCustomer', {
      key: key(),
      params: { customerId: customer.token },
      form: { card: second.token, default_card: 1 },
    });
    const deleted = await client.call<{ token: string; is_deleted: boolean }>(
      'deleteCustomerCard',
      {
        key: key(),
        params: { customerId: customer.token, cardId: second.token },
      },
    );
    expect(deleted.body).toEqual({ token: second.token, is_deleted: true });
    expect((await read(customer.token)).card.token).toBe(third.token);
    await client.call('deleteCustomerCardAlias', {
      key: key(),
      params: { customerId: customer.token, cardId: third.token },
    });
    expect((await read(customer.token)).card.token).toBe(customer.card.token);
    await client.refused(
      'deleteCustomerCard',
      { key: key(), params: { customerId: customer.token, cardId: customer.card.token } },
      400,
      30010,
    );
  });

  it('deletes a customer: the reduced object, inactive, no more payments or changes', async () => {
    const customer = await newCustomer();
    const deleted = await client.call<Record<string, unknown>>('deleteCustomer', {
      key: key(),
      params: { customerId: customer.token },
    });
    expect(Object.keys(deleted.body).sort()).toEqual([
      'date_created',
      'date_modified',
      'description',
      'email',
      'full_name',
      'is_active',
      'token',
    ]);
    expect(deleted.body.is_active).toBe(false);
    expect((await read(customer.token)).is_active).toBe(false);
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 100, token: customer.token } },
      400,
      40001,
    );
    await client.refused(
      'updateCustomer',
      { key: key(), params: { customerId: customer.token }, form: { full_name: 'X' } },
      404,
      30004,
    );
    await client.refused(
      'deleteCustomer',
      { key: key(), params: { customerId: customer.token } },
      404,
      30004,
    );
    await client.refused(
      'createCustomerCard',
      { key: key(), params: { customerId: customer.token }, form: storable() },
      404,
      30004,
    );
    await client.refused(
      'retrieveCustomer',
      { key: key(), params: { customerId: 'cus_unknown' } },
      404,
      30004,
    );
  });

  it('creates a customer from a payment with create_customer=1, its card the default', async () => {
    const paid = await client.call<Payment>('createPayment', {
      key: key(),
      form: {
        amount: 1_000,
        create_customer: 1,
        payee_email: 'buyer@example.com',
        ...cardFields(),
      },
    });
    const customerId = paid.body.card.customer as string;
    expect(customerId).toMatch(/^cus_/);
    const customer = await read(customerId);
    expect(customer).toMatchObject({
      email: 'buyer@example.com',
      card: { token: paid.body.card.token },
    });
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 1_000, create_customer: 2, ...cardFields() } },
      400,
      40033,
    );
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 1_000, create_customer: 1, token: customerId } },
      400,
      80002,
    );
  });

  it('assigns a payment and its card to a customer, making it the default only with default_card=1', async () => {
    const customer = await newCustomer();
    const added = await client.call<Payment>('createPayment', {
      key: key(),
      form: { amount: 500, customer: customer.token, ...cardFields('4556390755719395') },
    });
    let now = await read(customer.token);
    expect(now.cards.count).toBe(2);
    expect(now.card.token).toBe(customer.card.token);
    const promoted = await client.call<Payment>('createPayment', {
      key: key(),
      form: {
        amount: 500,
        customer: customer.token,
        default_card: 1,
        ...cardFields('4111111111111111'),
      },
    });
    now = await read(customer.token);
    expect(now.card.token).toBe(promoted.body.card.token);
    expect(added.body.card.customer).toBe(customer.token);
  });

  it('reports a stored card expired once its month has passed, and refuses to charge it (20004)', async () => {
    const other = await CardSandboxClient.start();
    try {
      const shop = await other.merchant();
      const customer = (
        await other.call<Customer>('createCustomer', { key: shop.secretKey, form: storable() })
      ).body;
      expect(customer.card).toMatchObject({ status: 'valid' });
      await other.advanceClock(3 * 366 * 86_400);
      const later = await other.call<Customer>('retrieveCustomer', {
        key: shop.secretKey,
        params: { customerId: customer.token },
      });
      expect(later.body.card).toMatchObject({ status: 'expired' });
      await other.refused(
        'createPayment',
        { key: shop.secretKey, form: { amount: 100, token: customer.token } },
        400,
        20004,
      );
    } finally {
      await other.close();
    }
  });

  it('lists customers, deleted ones included', async () => {
    const shop = await client.merchant();
    const first = (
      await client.call<Customer>('createCustomer', { key: shop.secretKey, form: storable() })
    ).body;
    await client.call<Customer>('createCustomer', { key: shop.secretKey, form: storable() });
    await client.call('deleteCustomer', {
      key: shop.secretKey,
      params: { customerId: first.token },
    });
    const listed = await client.call<List<Customer>>('listCustomers', { key: shop.secretKey });
    expect(listed.body.total_count).toBe(2);
    expect(listed.body.items.map((c) => c.is_active)).toEqual([true, false]);
  });
});

describe('sandbox card API: mandates and branches', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const key = () => merchant.secretKey;

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant();
  });
  afterAll(() => client.close());

  it('creates a mandate from a payment with a customer and a mandate_reference, charges on it, lists and revokes it', async () => {
    const customer = (
      await client.call<Customer>('createCustomer', { key: key(), form: storable() })
    ).body;
    const first = await client.call<Payment>('createPayment', {
      key: key(),
      form: { amount: 1_500, token: customer.token, mandate_reference: 'SUB-2026-001' },
    });
    const mandateId = first.body.mandate as string;
    expect(mandateId).toMatch(/^man_/);
    expect(first.body.mandate_reference).toBe('SUB-2026-001');
    const recurring = await client.call<Payment>('createPayment', {
      key: key(),
      form: { amount: 1_500, token: customer.token, mandate: mandateId },
    });
    expect(recurring.body).toMatchObject({
      status: 'Captured',
      mandate: mandateId,
      mandate_reference: 'SUB-2026-001',
    });

    const list = (query: Record<string, string> = {}) =>
      client.call<List<Mandate>>('listCustomerMandates', {
        key: key(),
        params: { customerId: customer.token },
        query,
      });
    const listed = await list();
    expect(listed.body.items).toEqual([
      expect.objectContaining({
        token: mandateId,
        status: 'valid',
        mandate_reference: 'SUB-2026-001',
      }),
    ]);
    expect(listed.body.items[0].date_created).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect((await list({ status: 'completed' })).body.total_count).toBe(1);
    expect((await list({ status: 'revoked' })).body.total_count).toBe(0);
    expect((await list({ mandate_reference: 'SUB-2026-001' })).body.total_count).toBe(1);
    expect((await list({ mandate_reference: 'OTHER-1' })).body.total_count).toBe(0);
    await client.refused(
      'listCustomerMandates',
      { key: key(), params: { customerId: customer.token }, query: { mandate_reference: 'abcd' } },
      400,
      80002,
    );

    const revoked = await client.call<Mandate>('deleteMandate', {
      key: key(),
      params: { customerId: customer.token, mandateId },
    });
    expect(revoked.body.status).toBe('revoked');
    expect((await list({ status: 'revoked' })).body.total_count).toBe(1);
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 1_500, token: customer.token, mandate: mandateId } },
      400,
      80002,
    );
    await client.refused(
      'deleteMandate',
      { key: key(), params: { customerId: customer.token, mandateId: 'man_unknown' } },
      404,
      10002,
    );
  });

  it('refuses a mandate_reference shorter than 5 and one without a customer', async () => {
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 100, mandate_reference: 'abcd', ...cardFields() } },
      400,
      80002,
    );
    await client.refused(
      'createPayment',
      { key: key(), form: { amount: 100, mandate_reference: 'abcde', ...cardFields() } },
      400,
      80002,
    );
  });

  it('lists the merchant branches with count and offset, and no date filters', async () => {
    const all = await client.call<List<{ token: string; title: string }>>('listBranches', {
      key: key(),
    });
    expect(all.body.total_count).toBe(2);
    expect(all.body.items.map((b) => b.token)).toEqual(
      Array(2).fill(expect.stringMatching(/^brc_/)),
    );
    const second = await client.call<List<{ title: string }>>('listBranches', {
      key: key(),
      query: { count: 1, offset: 1 },
    });
    expect(second.body.items).toHaveLength(1);
    await client.refused(
      'listBranches',
      { key: key(), query: { date_from: '2026-01-01' } },
      400,
      80001,
    );
  });
});
