import { signIrisJson } from '#src/shared/iris/iris-hash.js';
import {
  CardError,
  invalid,
  newId,
  ok,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { cardFromFields } from '../card-sources.js';
import type { CardTokenRecord } from '../card-state.js';
import { timestamp } from '../card-views.js';
import { escapeHtml } from '../iris/iris-sessions.js';
import type { PageAddresses } from '../notifications/notifications.js';
import type { DomainRecord, WalletRecord } from './wallet-records.js';
import { readWalletToken } from './wallet-token.js';

/** A merchant has at most this many registered device-wallet domains (card.yaml). */
export const MAX_DOMAINS = 99;

export const walletPageOf = (pages: PageAddresses, token: string) =>
  `${pages.pagesUrl}/webwallet/${token}`;

/** The signed result of a tokenisation: json {callback_url, token, md} in that order. */
export function walletResult(secretKey: string, wallet: WalletRecord, cardToken: string) {
  const json = JSON.stringify({
    callback_url: wallet.callbackUrl,
    token: cardToken,
    md: wallet.md,
  });
  return { token: cardToken, md: wallet.md, hash: signIrisJson(secretKey, json) };
}

/** Makes the wallet's card token (bound to its amount, single use, 15 minutes like any card token). */
export function issueWalletCardToken(context: CardContext, wallet: WalletRecord): string {
  const token: CardTokenRecord = {
    token: newId('ctn'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    amount: wallet.amount,
    used: false,
    card: wallet.card,
  };
  context.state.put(context.book, 'token', token);
  wallet.status = 'completed';
  wallet.cardToken = token.token;
  context.state.put(context.book, 'wallet', wallet);
  return token.token;
}

const registered = (context: CardContext) =>
  [...context.book.domains.values()]
    .filter((domain) => domain.status === 'registered')
    .sort((a, b) => a.seq - b.seq);

const domainList = (context: CardContext) => {
  const items = registered(context);
  return ok({
    total_count: items.length,
    items: items.map((d) => ({ domain_name: d.domainName, date_created: timestamp(d.created) })),
  });
};

const namesOf = (body: Record<string, unknown>) => [
  ...new Set((body.domain_names as string[]).map((name) => name.toLowerCase())),
];

/** The wallet operations of card.yaml, bound to the address of the PAN-only page. */
export function walletOperations(pages: PageAddresses) {
  function tokenizeWebWallet(context: CardContext, request: CardRequest): CardAnswer {
    const { body } = request;
    if (body.sandbox !== 1) throw invalid('sandbox');
    if (body.type === 'devicewallet' && registered(context).length === 0) throw invalid('type');
    const uuid = body.uuid as string;
    if ([...context.book.wallets.values()].some((wallet) => wallet.uuid === uuid))
      throw invalid('uuid');
    const message = readWalletToken(body.token as string, context.now);
    if (message.authMethod === 'PAN_ONLY' && !body.payer_email && !body.payer_phone)
      throw invalid('payer_email');
    let card;
    try {
      card = cardFromFields(
        context,
        {
          card_number: message.pan,
          expiration_month: message.expirationMonth,
          expiration_year: message.expirationYear,
          holder_name: 'Wallet payer',
        },
        { cvvRequired: false },
      );
    } catch (error) {
      if (error instanceof CardError && (error.code === 20001 || error.code === 20002))
        throw new CardError(400, 20004);
      throw error;
    }
    const wallet: WalletRecord = {
      token: newId('wlt'),
      merchantId: context.book.merchant.id,
      seq: context.state.nextSeq(),
      created: context.now.toISOString(),
      uuid,
      amount: body.amount as number,
      md: (body.md as string | undefined) ?? '',
      callbackUrl: body.callback_url as string,
      authMethod: message.authMethod,
      card,
      status: 'pending',
      cardToken: null,
    };
    context.state.put(context.book, 'wallet', wallet);
    if (message.authMethod === 'CRYPTOGRAM_3DS') {
      const cardToken = issueWalletCardToken(context, wallet);
      const result = walletResult(context.book.merchant.secretKey, wallet, cardToken);
      return ok({ flow: 'direct', data: { ...result, callback_url: wallet.callbackUrl } });
    }
    const hidden = (name: string, value: string) =>
      `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
    const payload =
      `<form id="webwallet-form" method="POST" action="${escapeHtml(walletPageOf(pages, wallet.token))}">` +
      hidden('md', wallet.md) +
      hidden('pk', context.book.merchant.publicKey) +
      `<button type="submit">${body.locale === 'en' ? 'Continue to 3-D Secure' : 'Συνέχεια στο 3-D Secure'}</button></form>`;
    return ok({ flow: 'form', data: { payload, md: wallet.md, callback_url: wallet.callbackUrl } });
  }

  return { tokenizeWebWallet, tokenizeWebWalletAlias: tokenizeWebWallet };
}

export function registerDeviceWalletDomains(context: CardContext, request: CardRequest) {
  const known = new Set(registered(context).map((domain) => domain.domainName));
  const fresh = namesOf(request.body).filter((name) => !known.has(name));
  if (known.size + fresh.length > MAX_DOMAINS) throw invalid('domain_names');
  for (const domainName of fresh) {
    const domain: DomainRecord = {
      token: newId('dwd'),
      merchantId: context.book.merchant.id,
      seq: context.state.nextSeq(),
      created: context.now.toISOString(),
      domainName,
      status: 'registered',
    };
    context.state.put(context.book, 'domain', domain);
  }
  return domainList(context);
}

export function listDeviceWalletDomains(context: CardContext) {
  return domainList(context);
}

export function deleteDeviceWalletDomains(context: CardContext, request: CardRequest) {
  const byName = new Map(registered(context).map((domain) => [domain.domainName, domain]));
  const names = namesOf(request.body);
  if (names.some((name) => !byName.has(name))) throw invalid('domain_names');
  for (const name of names) {
    const domain = byName.get(name) as DomainRecord;
    domain.status = 'deleted';
    domain.deleted = context.now.toISOString();
    domain.reason = request.body.reason as string;
    context.state.put(context.book, 'domain', domain);
  }
  return domainList(context);
}
