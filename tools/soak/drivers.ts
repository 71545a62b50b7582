// One load driver per capability: each iteration is what an app does with it, through the facade; a
// driver runs its iterations one after another at a bounded rate until the soak's end.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSandbox } from '#src/sandbox/sandbox.js';
import { completeSca } from '#src/sandbox/scripted-psu.js';
import type { SoakHttp, Tally } from './http.js';
import { formOf, submit, type Form } from './pages.js';
import type { Replica } from './rig.js';

export interface SoakTenant {
  slug: string;
  id: string;
  key: string;
  merchantId: string;
  /** POS terminals: one that approves at once, one that takes a few seconds. */
  fastTerminal: string;
  slowTerminal: string;
  /** Approved account-information consents (valid at the bank) with their account. */
  consents: { consentId: string; accountId: string }[];
  fundsConsentId?: string;
  sellers: string[];
}

export interface DriverContext {
  http: SoakHttp;
  sandbox: RunningSandbox;
  replicas: () => Replica[];
  /** A random number in [0, 1) from the soak's seed. */
  random: () => number;
}

const ALICE = { username: 'alice', password: 'alice-pass' };
const ALICE_HUF = 'HU75118000170000001234567817';
const ALICE_EUR = 'HU80118000170000001234567824';
const CARD = {
  cardNumber: '4556390755719395',
  expirationMonth: '12',
  expirationYear: '2031',
  holderName: 'Grace Hopper',
  cvv: '321',
};
const inDays = (days: number) =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const key = () => ({ 'idempotency-key': randomUUID() });

type Driver = (ctx: DriverContext, tenant: SoakTenant) => Promise<void>;

/** Follows the bank's redirect back to Portico as the user's browser does (to a live replica). */
async function followCallback(ctx: DriverContext, capability: string, callback: string) {
  const url = new URL(callback);
  await asABrowser(
    ctx,
    capability,
    async (replica) => {
      const back = await fetch(`${replica.base}${url.pathname}${url.search}`, {
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      await back.arrayBuffer();
      return { status: back.status, what: 'GET sca callback' };
    },
    url.origin,
  );
}

/**
 * A page load of the user's browser aimed at Portico, to a live replica (the one named if alive),
 * tried again as a person reloads when it fails (no answer or a 5xx), up to three times.
 */
async function asABrowser(
  ctx: DriverContext,
  capability: string,
  load: (replica: { base: string; name: string }) => Promise<{ status: number; what: string }>,
  origin: string,
) {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const live = ctx.replicas().filter((replica) => replica.child && !replica.child.killed);
    const replica = live.find((r) => r.base === origin) ?? live[0];
    if (!replica) return;
    const tally = ctx.http.tally(capability);
    tally.requests++;
    try {
      const answer = await load(replica);
      countBrowserAnswer(ctx, tally, answer.status, answer.what, replica.name);
      if (answer.status < 500) return;
    } catch {
      tally.faulted++;
    }
    await new Promise((done) => setTimeout(done, 1_000 * attempt));
  }
}

function countBrowserAnswer(
  ctx: DriverContext,
  tally: Tally,
  status: number,
  what: string,
  replica: string,
) {
  if (status === 500) {
    tally.status500++;
    ctx.http.fiveHundreds.push(`${what} (${replica})`);
  } else if (status < 400) tally.ok++;
  else if ([502, 503, 504].includes(status)) tally.faulted++;
  else {
    tally.other++;
    if (tally.samples.length < 3) tally.samples.push(`${status} ${what}`);
  }
}

/** SCA at the sandbox's pages, approved or denied; the redirect back followed. */
async function sca(ctx: DriverContext, capability: string, link: unknown, approve: boolean) {
  if (typeof link !== 'string') return;
  const callback = await completeSca(link, {
    ...ALICE,
    decision: approve ? 'approve' : 'deny',
  }).catch(() => undefined);
  if (callback) await followCallback(ctx, capability, callback);
}

const consents: Driver = async (ctx, tenant) => {
  const approve = ctx.random() < 0.75;
  const created = await ctx.http.call(
    'consents',
    tenant,
    'POST',
    '/v1/consents',
    {
      brandId: 'danube-bank',
      access: {
        accounts: [{ iban: ALICE_HUF }],
        balances: [{ iban: ALICE_HUF }],
        transactions: [{ iban: ALICE_HUF }],
      },
      recurringIndicator: true,
      validUntil: inDays(30),
      frequencyPerDay: 4,
      redirectUri: 'https://app.example/back',
      nokRedirectUri: 'https://app.example/nok',
    },
    key(),
  );
  if (created?.status !== 201) return;
  const consentId = created.body.consentId as string;
  ctx.http.own(tenant.slug, consentId);
  await sca(ctx, 'consents', created.body._links?.scaRedirect, approve);
  const read = await ctx.http.call('consents', tenant, 'GET', `/v1/consents/${consentId}`);
  const accountId = read?.body.accounts?.[0]?.resourceId as string | undefined;
  if (read?.body.status === 'valid' && accountId) {
    tenant.consents.push({ consentId, accountId });
    if (tenant.consents.length > 20) tenant.consents.shift();
  }
};

const reads: Driver = async (ctx, tenant) => {
  const consent = tenant.consents[Math.floor(ctx.random() * tenant.consents.length)];
  if (!consent) return;
  const attended = ctx.random() < 0.7;
  const headers: Record<string, string> = { 'consent-id': consent.consentId };
  if (attended) headers['psu-ip-address'] = '192.0.2.10';
  const what = ctx.random() < 0.5 ? 'balances' : 'transactions';
  await ctx.http.call(
    attended ? 'reads (attended)' : 'reads (unattended)',
    tenant,
    'GET',
    `/v1/accounts/${consent.accountId}/${what}`,
    undefined,
    headers,
  );
};

const funds: Driver = async (ctx, tenant) => {
  // Until one is approved, and now and then after: a consent the user denies at the bank.
  const deny = tenant.fundsConsentId ? ctx.random() < 0.1 : ctx.random() < 0.3;
  if (!tenant.fundsConsentId || deny) {
    const created = await ctx.http.call(
      'funds confirmations',
      tenant,
      'POST',
      '/v1/funds-confirmation-consents',
      {
        brandId: 'danube-bank',
        account: { iban: ALICE_EUR },
        redirectUri: 'https://app.example/funds',
      },
      key(),
    );
    if (created?.status !== 201) return;
    ctx.http.own(tenant.slug, created.body.consentId);
    await sca(ctx, 'funds confirmations', created.body._links?.scaRedirect, !deny);
    const read = await ctx.http.call(
      'funds confirmations',
      tenant,
      'GET',
      `/v1/funds-confirmation-consents/${created.body.consentId}/status`,
    );
    if (!deny && read?.body.consentStatus === 'valid')
      tenant.fundsConsentId = created.body.consentId as string;
    return;
  }
  await ctx.http.call(
    'funds confirmations',
    tenant,
    'POST',
    '/v1/funds-confirmations',
    {
      account: { iban: ALICE_EUR },
      instructedAmount: { currency: 'EUR', amount: (1 + Math.floor(ctx.random() * 50)).toFixed(2) },
    },
    { 'consent-id': tenant.fundsConsentId },
  );
};

const payments: Driver = async (ctx, tenant) => {
  const created = await ctx.http.call(
    'payments',
    tenant,
    'POST',
    '/v1/payments',
    {
      brandId: 'danube-bank',
      paymentProduct: 'domestic-credit-transfers',
      payment: {
        instructedAmount: { currency: 'HUF', amount: `${100 + Math.floor(ctx.random() * 900)}.00` },
        creditorName: 'Kovacs Peter',
        creditorAccount: { iban: 'HU42117730161111101800000000' },
        creditorType: 'INDIVIDUAL',
        // Unique: a payment whose creation answer was lost is found at the bank by it (collect.ts).
        remittanceInformationUnstructured: `Soak ${randomUUID()}`,
      },
      redirectUri: 'https://app.example/back',
      nokRedirectUri: 'https://app.example/nok',
    },
    key(),
  );
  if (created?.status !== 201) return;
  const paymentId = created.body.paymentId as string;
  ctx.http.own(tenant.slug, paymentId);
  await sca(ctx, 'payments', created.body._links?.scaRedirect, ctx.random() < 0.8);
  await ctx.http.call('payments', tenant, 'GET', `/v1/payments/${paymentId}/status`);
};

const cardPayments: Driver = async (ctx, tenant) => {
  const preAuthorise = ctx.random() < 0.4;
  const amount = 500 + Math.floor(ctx.random() * 5000);
  const created = await ctx.http.call(
    'card payments',
    tenant,
    'POST',
    '/v1/card/payments',
    {
      amount,
      ...CARD,
      ...(preAuthorise ? { capture: 0 } : {}),
    },
    key(),
  );
  if (created?.status !== 201) return;
  const token = created.body.token as string;
  ctx.http.own(tenant.slug, token);
  if (preAuthorise)
    await ctx.http.call(
      'card pre-auth + capture',
      tenant,
      'POST',
      `/v1/card/payments/${token}/capture`,
      {},
      key(),
    );
  if (ctx.random() < 0.5) {
    const refund = await ctx.http.call(
      'card refunds',
      tenant,
      'POST',
      '/v1/card/refunds',
      {
        payment: token,
        amount: Math.floor(amount / 3),
      },
      key(),
    );
    if (refund?.status === 201) ctx.http.own(tenant.slug, refund.body.token);
  }
  await ctx.http.call('card payments', tenant, 'GET', `/v1/card/payments/${token}`);
};

const cardOthers: Driver = async (ctx, tenant) => {
  const which = Math.floor(ctx.random() * 4);
  if (which === 0) {
    const customer = await ctx.http.call(
      'card customers',
      tenant,
      'POST',
      '/v1/card/customers',
      {
        ...CARD,
        cvv: undefined,
        email: 'ada@example.com',
        fullName: 'Ada Lovelace',
      },
      key(),
    );
    if (customer?.status === 201)
      ctx.http.own(tenant.slug, customer.body.token ?? customer.body.id);
  } else if (which === 1) {
    const token = await ctx.http.call(
      'card tokens',
      tenant,
      'POST',
      '/v1/card/tokens',
      CARD,
      key(),
    );
    if (token?.status === 201) ctx.http.own(tenant.slug, token.body.token ?? token.body.id);
  } else if (which === 2) {
    const link = await ctx.http.call(
      'card links',
      tenant,
      'POST',
      '/v1/card/notifications',
      {
        amount: 2500,
        description: 'Soak invoice',
        payeeEmail: 'eleni@example.com',
        payeeName: 'Eleni Georgiou',
        payeePhone: '+306900000001',
        locale: 'en',
        skipNotify: 1,
      },
      key(),
    );
    if (link?.status === 201) ctx.http.own(tenant.slug, link.body.token);
  } else await iris(ctx, tenant);
};

/** An IRIS session, its payment form, the payer's decision at the bank and the browser's return. */
async function iris(ctx: DriverContext, tenant: SoakTenant) {
  const session = await ctx.http.call(
    'IRIS',
    tenant,
    'POST',
    '/v1/card/iris/sessions',
    { amount: 1500, country: 'GR', md: 'soak', returnUrl: 'https://shop.example/iris/back' },
    key(),
  );
  if (session?.status !== 201) return;
  const id = session.body.id as string;
  ctx.http.own(tenant.slug, id, session.body.token);
  const choice = ctx.random();
  // One in five is left to expire unpaid: the payer never opens the form.
  if (choice < 0.2) return;
  const payform = await ctx.http.call(
    'IRIS',
    tenant,
    'POST',
    `/v1/card/iris/sessions/${id}/payform`,
    undefined,
  );
  const form =
    typeof payform?.body.payload === 'string'
      ? formOf(payform.body.payload, ctx.sandbox.cardUrl)
      : undefined;
  if (form) {
    const decision = choice < 0.75 ? 'approve' : choice < 0.9 ? 'refuse' : 'cancel';
    const outcome = await payerAtBank(form, decision).catch(() => undefined);
    // The bank's page posts the result to Portico's callback: the browser follows it (to a live replica).
    const back = outcome ? formOf(outcome, form.action) : undefined;
    if (back) await followForm(ctx, 'IRIS', back);
  }
  await ctx.http.call('IRIS', tenant, 'GET', `/v1/card/iris/sessions/${id}`);
}

async function payerAtBank(payform: Form, decision: string): Promise<string | undefined> {
  const bank = await submit(payform.action, payform.fields);
  if (bank.status !== 200) return undefined;
  const decided = await submit(`${payform.action}/decision`, { decision });
  return decided.status === 200 ? decided.html : undefined;
}

/** Posts a form aimed at Portico as the browser would, to a live replica (the one named if alive). */
async function followForm(ctx: DriverContext, capability: string, form: Form) {
  const url = new URL(form.action);
  await asABrowser(
    ctx,
    capability,
    async (replica) => {
      const answer = await submit(`${replica.base}${url.pathname}${url.search}`, form.fields);
      return { status: answer.status, what: `POST ${url.pathname.replace(/[^/]{20,}$/, ':ref')}` };
    },
    url.origin,
  );
}

const marketplace: Driver = async (ctx, tenant) => {
  if (tenant.sellers.length < 2) {
    const n = Math.floor(ctx.random() * 1e8);
    const seller = await ctx.http.call(
      'marketplace sellers',
      tenant,
      'POST',
      '/v1/marketplace/sellers',
      {
        email: `seller${n}@shop.example`,
        contactPhone: '+306900000000',
        description: `Seller ${n}`,
        business: {
          name: `Business ${n}`,
          title: `Business ${n} S.A.`,
          taxNumber: `EL${100000000 + (n % 899999999)}`,
          address: `Ermou ${n}, Athens`,
        },
        bankAccount: { iban: 'GR1601101250000000012300695', beneficiaryName: `Business ${n}` },
      },
      key(),
    );
    if (seller?.status === 201) {
      ctx.http.own(tenant.slug, seller.body.token ?? seller.body.id);
      tenant.sellers.push((seller.body.token ?? seller.body.id) as string);
    }
    return;
  }
  const seller = tenant.sellers[Math.floor(ctx.random() * tenant.sellers.length)];
  const payment = await ctx.http.call(
    'marketplace transfers',
    tenant,
    'POST',
    '/v1/card/payments',
    {
      amount: 2000,
      ...CARD,
      split: 1,
    },
    key(),
  );
  if (payment?.status !== 201) return;
  ctx.http.own(tenant.slug, payment.body.token);
  const transfer = await ctx.http.call(
    'marketplace transfers',
    tenant,
    'POST',
    `/v1/marketplace/payments/${payment.body.token}/transfers`,
    {
      seller,
      amount: 900,
      commissionAmount: 90,
      description: 'Soak order share',
    },
    key(),
  );
  if (transfer?.status !== 201) return;
  const transferId = (transfer.body.token ?? transfer.body.id) as string;
  ctx.http.own(tenant.slug, transferId);
  if (ctx.random() < 0.5) {
    const reversal = await ctx.http.call(
      'marketplace reversals',
      tenant,
      'POST',
      '/v1/marketplace/reversals',
      {
        transfer: transferId,
        amount: 300,
      },
      key(),
    );
    if (reversal?.status === 201)
      ctx.http.own(tenant.slug, reversal.body.token ?? reversal.body.id);
  }
};

const pos: Driver = async (ctx, tenant) => {
  const kind = ctx.random();
  const slow = kind < 0.3;
  const transactionId = randomUUID();
  ctx.http.own(tenant.slug, transactionId);
  const capability = slow ? 'POS slow' : 'POS fast';
  const paid = await ctx.http.call(
    capability,
    tenant,
    'POST',
    '/v1/pos/transactions',
    {
      transactionId,
      amount: 1000 + Math.floor(ctx.random() * 1000),
      currency: 'EUR',
      type: 'payment',
      terminal: slow ? tenant.slowTerminal : tenant.fastTerminal,
    },
    key(),
  );
  if (!slow && kind > 0.7 && paid?.status === 200 && paid.body.status === 'CAPTURED') {
    const voidId = randomUUID();
    ctx.http.own(tenant.slug, voidId);
    await ctx.http.call(
      'POS voided',
      tenant,
      'POST',
      '/v1/pos/transactions',
      {
        transactionId: voidId,
        currency: 'EUR',
        type: 'void',
        terminal: tenant.fastTerminal,
        originalTransactionId: transactionId,
      },
      key(),
    );
  }
  await ctx.http.call(capability, tenant, 'GET', `/v1/pos/transactions/${transactionId}`);
};

const wallets: Driver = async (ctx, tenant) => {
  const made = await fetch(`${ctx.sandbox.scaUrl}/sandbox/card/wallet-tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
    .then((response) => response.json() as Promise<{ token: string }>)
    .catch(() => undefined);
  if (!made) return;
  const tokenization = await ctx.http.call(
    'wallets',
    tenant,
    'POST',
    '/v1/card/wallets/tokenizations',
    {
      amount: 1250,
      type: 'webwallet',
      token: made.token,
      md: 'soak',
      returnUrl: 'https://shop.example/wallet/back',
    },
    key(),
  );
  if (tokenization?.status !== 201) return;
  ctx.http.own(tenant.slug, tokenization.body.id, tokenization.body.cardToken);
  // The checkout charges the card token the wallet gave.
  if (typeof tokenization.body.cardToken !== 'string') return;
  const payment = await ctx.http.call(
    'wallets',
    tenant,
    'POST',
    '/v1/card/payments',
    { amount: 1250, token: tokenization.body.cardToken },
    key(),
  );
  if (payment?.status === 201) ctx.http.own(tenant.slug, payment.body.token);
};

/** Each capability with its pause between iterations (ms): modest rates on a shared 2-core machine. */
export const DRIVERS: { name: string; run: Driver; pauseMs: number }[] = [
  { name: 'consents', run: consents, pauseMs: 3000 },
  { name: 'reads', run: reads, pauseMs: 400 },
  { name: 'funds', run: funds, pauseMs: 2000 },
  { name: 'payments', run: payments, pauseMs: 3000 },
  { name: 'card payments', run: cardPayments, pauseMs: 1500 },
  { name: 'card others', run: cardOthers, pauseMs: 1500 },
  { name: 'marketplace', run: marketplace, pauseMs: 3000 },
  { name: 'pos', run: pos, pauseMs: 1500 },
  { name: 'wallets', run: wallets, pauseMs: 4000 },
];

/** Runs every driver for every tenant until `until` (ms); each loop stops by itself. */
export async function drive(
  ctx: DriverContext,
  tenants: SoakTenant[],
  until: number,
): Promise<void> {
  const loops = tenants.flatMap((tenant) =>
    DRIVERS.map(async ({ run, pauseMs }) => {
      // Spread the tenants' loops so that they do not all fire at once.
      await sleep(Math.floor(ctx.random() * pauseMs));
      while (Date.now() < until) {
        await run(ctx, tenant).catch(() => undefined);
        await sleep(pauseMs);
      }
    }),
  );
  await Promise.all(loops);
}
