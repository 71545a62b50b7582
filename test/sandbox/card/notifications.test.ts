import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CardSandboxClient, cardFields, type Merchant } from '../../support/card-api.js';
import { page } from '../../support/card-pages.js';

type Payment = {
  token: string;
  status: string;
  amount: number;
  split: boolean;
  card: { customer?: string };
};
type Notification = {
  token: string;
  status: string;
  payment: Payment | null;
  payment_link_url: string;
  amount: number;
  locale: string;
  skip_notify: boolean;
  create_customer: boolean;
  split: boolean;
  expiration_date: string | null;
  metadata: Record<string, string>;
  date_created: string;
};
type List<T> = { total_count: number; items: T[] };
type Outbox = List<{ to: string; notification: string; link: string; locale: string }>;

const REQUIRED = {
  payee_name: 'Eleni Georgiou',
  payee_email: 'eleni@example.com',
  payee_phone: '+306900000001',
  amount: 2500,
  description: 'Invoice 42',
};

describe('sandbox card API: notifications (hosted payment links)', () => {
  let client: CardSandboxClient;
  let merchant: Merchant;
  const create = (form: Record<string, unknown>) =>
    client.call<Notification>('createNotification', { key: merchant.secretKey, form });
  const notification = async (notificationId: string) =>
    (
      await client.call<Notification>('retrieveNotification', {
        key: merchant.secretKey,
        params: { notificationId },
      })
    ).body;
  const outbox = async () =>
    (await client.control('GET', `/sandbox/card/merchants/${merchant.merchantId}/outbox`))
      .body as Outbox;
  const later = (minutes: number) =>
    new Date(Date.now() + minutes * 60_000).toISOString().replace(/\.\d+Z$/, '+0000');

  beforeAll(async () => {
    client = await CardSandboxClient.start();
    merchant = await client.merchant('Acme Shop');
  });
  afterAll(() => client.close());

  it('creates a Pending notification with the defaults, 0/1 inputs returned as booleans', async () => {
    const created = (await create({ ...REQUIRED, metadata: { order: '42' } })).body;
    expect(created).toMatchObject({
      status: 'Pending',
      payment: null,
      amount: 2500,
      locale: 'el',
      skip_notify: false,
      create_customer: false,
      split: false,
      expiration_date: null,
      metadata: { order: '42' },
    });
    expect(created.token).toMatch(/^pnt_/);
    expect(created.payment_link_url).toBe(`${client.sandbox.scaUrl}/pay/${created.token}`);
    const flags = (
      await create({ ...REQUIRED, skip_notify: 1, create_customer: 1, split: 1, locale: 'en' })
    ).body;
    expect(flags).toMatchObject({
      skip_notify: true,
      create_customer: true,
      split: true,
      locale: 'en',
    });
  });

  it.each([
    ['payee_name', 80002],
    ['payee_email', 40021],
    ['payee_phone', 40022],
    ['amount', 40002],
    ['description', 40008],
  ])('refuses a notification without %s (code %d)', async (field, code) => {
    const form: Record<string, unknown> = { ...REQUIRED };
    delete form[field];
    const refused = await client.refused(
      'createNotification',
      { key: merchant.secretKey, form },
      400,
      code,
    );
    if (code === 80002) expect(refused.body.error.message).toContain(field);
  });

  it('refuses an amount of 0, a description of 201 characters, a locale other than el/en and flags other than 0/1', async () => {
    const key = merchant.secretKey;
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, amount: 0 } },
      400,
      40002,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, amount: -5 } },
      400,
      40002,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, description: 'x'.repeat(201) } },
      400,
      40008,
    );
    expect((await create({ ...REQUIRED, description: 'x'.repeat(200) })).status).toBe(200);
    const locale = await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, locale: 'de' } },
      400,
      80002,
    );
    expect(locale.body.error.message).toContain('locale');
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, create_customer: 2 } },
      400,
      40033,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, skip_notify: 2 } },
      400,
      80002,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, payee_email: 'nope' } },
      400,
      40021,
    );
  });

  it('takes an expiration_date at least 5 minutes ahead, refusing a nearer or past one', async () => {
    const key = merchant.secretKey;
    const ok = (await create({ ...REQUIRED, expiration_date: later(6) })).body;
    expect(ok.expiration_date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000$/);
    const near = await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, expiration_date: later(4) } },
      400,
      80002,
    );
    expect(near.body.error.message).toContain('expiration_date');
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, expiration_date: later(-60) } },
      400,
      80002,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, expiration_date: 'tomorrow' } },
      400,
      80002,
    );
  });

  it('applies the metadata limits: 20 keys, key 40 characters, value 200', async () => {
    const key = merchant.secretKey;
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v']));
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, metadata: many } },
      400,
      80002,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, metadata: { ['k'.repeat(41)]: 'v' } } },
      400,
      80002,
    );
    await client.refused(
      'createNotification',
      { key, form: { ...REQUIRED, metadata: { k: 'v'.repeat(201) } } },
      400,
      80002,
    );
  });

  it('e-mails the payee unless skip_notify=1 (the outbox control)', async () => {
    const mailed = (await create({ ...REQUIRED, payee_email: 'mailed@example.com', locale: 'en' }))
      .body;
    const silent = (
      await create({ ...REQUIRED, payee_email: 'silent@example.com', skip_notify: 1 })
    ).body;
    const items = (await outbox()).items;
    expect(items.filter((mail) => mail.notification === mailed.token)).toEqual([
      expect.objectContaining({
        to: 'mailed@example.com',
        link: mailed.payment_link_url,
        locale: 'en',
      }),
    ]);
    expect(items.some((mail) => mail.notification === silent.token)).toBe(false);
  });

  it('retrieves, lists most recent first with inclusive creation-day filters, and 404s an unknown one', async () => {
    const first = (await create(REQUIRED)).body;
    const second = (await create(REQUIRED)).body;
    expect((await notification(first.token)).token).toBe(first.token);
    const today = second.date_created.slice(0, 10);
    const list = (
      await client.call<List<Notification>>('listNotifications', {
        key: merchant.secretKey,
        query: { date_from: today, date_to: today, count: 2 },
      })
    ).body;
    expect(list.items.map((item) => item.token)).toEqual([second.token, first.token]);
    const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
    const none = (
      await client.call<List<Notification>>('listNotifications', {
        key: merchant.secretKey,
        query: { date_from: tomorrow },
      })
    ).body;
    expect(none.total_count).toBe(0);
    await client.refused(
      'retrieveNotification',
      { key: merchant.secretKey, params: { notificationId: 'pnt_unknown' } },
      404,
      10002,
    );
  });

  it("keeps one merchant's notifications from another", async () => {
    const mine = (await create(REQUIRED)).body;
    const other = await client.merchant();
    await client.refused(
      'retrieveNotification',
      { key: other.secretKey, params: { notificationId: mine.token } },
      404,
      10002,
    );
  });

  it('cancels only while Pending; the canceled page can no longer be paid', async () => {
    const created = (await create(REQUIRED)).body;
    const canceled = await client.call<Notification>('cancelNotification', {
      key: merchant.secretKey,
      params: { notificationId: created.token },
    });
    expect(canceled.body.status).toBe('Canceled');
    const again = await client.refused(
      'cancelNotification',
      { key: merchant.secretKey, params: { notificationId: created.token } },
      400,
      45001,
    );
    expect(again.body.error.message).toContain('Canceled');
    expect((await page(created.payment_link_url)).status).toBe(410);
    expect((await page(created.payment_link_url, cardFields())).status).toBe(410);
  });

  it('pays on the hosted page: Paid with its payment, a customer when create_customer=1, split carried', async () => {
    const created = (
      await create({ ...REQUIRED, create_customer: 1, split: 1, metadata: { order: '7' } })
    ).body;
    const shown = await page(created.payment_link_url);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('€25.00');
    const paid = await page(created.payment_link_url, cardFields());
    expect(paid.status).toBe(200);
    const after = await notification(created.token);
    expect(after.status).toBe('Paid');
    expect(after.payment).toMatchObject({ status: 'Captured', amount: 2500, split: true });
    const customerId = after.payment?.card.customer as string;
    const customer = await client.call<{ full_name: string; email: string }>('retrieveCustomer', {
      key: merchant.secretKey,
      params: { customerId },
    });
    expect(customer.body).toMatchObject({
      full_name: 'Eleni Georgiou',
      email: 'eleni@example.com',
    });
    await client.refused(
      'cancelNotification',
      { key: merchant.secretKey, params: { notificationId: created.token } },
      400,
      45001,
    );
    // A paid page cannot be paid twice.
    await page(created.payment_link_url, cardFields());
    const payments = await client.call<List<Payment>>('listPayments', {
      key: merchant.secretKey,
      query: { count: 20 },
    });
    expect(payments.body.items.filter((p) => p.token === after.payment?.token)).toHaveLength(1);
    expect((await notification(created.token)).payment?.token).toBe(after.payment?.token);
  });

  it('creates no customer without create_customer', async () => {
    const created = (await create(REQUIRED)).body;
    await page(created.payment_link_url, cardFields());
    expect((await notification(created.token)).payment?.card.customer).toBeUndefined();
  });

  it.each([
    ['4000000000009995', 402],
    ['4888137257116730', 500],
    ['4853451426120387', 502],
    ['4111111111111112', 400],
  ])(
    'a refused card (%s, %d) leaves the notification Pending for another attempt',
    async (number, status) => {
      const created = (await create(REQUIRED)).body;
      const refused = await page(created.payment_link_url, cardFields(number));
      expect(refused.status).toBe(status);
      expect(refused.html).toContain('id="error"');
      expect((await notification(created.token)).status).toBe('Pending');
      await page(created.payment_link_url, cardFields());
      expect((await notification(created.token)).status).toBe('Paid');
    },
  );

  it('refuses a card field of the wrong shape with its code, naming nothing of the card', async () => {
    const created = (await create(REQUIRED)).body;
    const refused = await page(created.payment_link_url, { ...cardFields(), cvv: '12' });
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('CVV');
    expect(refused.html).not.toContain('5217925525906273');
    expect((await notification(created.token)).status).toBe('Pending');
  });

  it('is Expired after its expiration_date and cannot be paid or canceled then', async () => {
    const created = (await create({ ...REQUIRED, expiration_date: later(10) })).body;
    await client.advanceClock(11 * 60);
    expect((await notification(created.token)).status).toBe('Expired');
    expect((await page(created.payment_link_url, cardFields())).status).toBe(410);
    await client.refused(
      'cancelNotification',
      { key: merchant.secretKey, params: { notificationId: created.token } },
      400,
      45001,
    );
    expect((await notification(created.token)).payment).toBeNull();
  });
});
