import { randomBytes } from 'node:crypto';
import {
  CardError,
  newId,
  ok,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { cardFromFields, TOKEN_LIFETIME_MS } from '../card-sources.js';
import type { StoredCard, TdsRecord } from '../card-state.js';
import { cardView } from '../card-views.js';
import type { PageAddresses } from '../notifications/notifications.js';

/** The sandbox's 3-D Secure test cards (card.yaml createTdsAuthentication); any other is frictionless. */
export const TDS_CHALLENGE_CARD = '4000000000003220';
export const TDS_FAILURE_CARD = '4000000000003097';

export const isTdsMerchant = (context: CardContext) => context.book.merchant.type === '3dsecure';

/** What the issuer reports of a successful authentication (EMV 3-D Secure's vocabulary). */
function authenticated(card: StoredCard, how: 'Frictionless' | 'Challenge approved'): StoredCard {
  return {
    ...card,
    tds: {
      enrolled: 'Y',
      eciFlag: card.type === 'Visa' ? '05' : '02',
      authCode: randomBytes(3).toString('hex').toUpperCase(),
      authDesc: how,
    },
  };
}

/** Makes the single-use card token an authenticated card pays with. */
function issueToken(context: CardContext, record: TdsRecord): void {
  const token = newId('ctn');
  context.state.put(context.book, 'token', {
    token,
    merchantId: record.merchantId,
    seq: context.state.nextSeq(),
    created: context.now.toISOString(),
    ...(record.amount !== undefined ? { amount: record.amount } : {}),
    used: false,
    card: record.card,
  });
  record.cardToken = token;
}

const view = (pages: PageAddresses, record: TdsRecord, now: Date) => ({
  token: record.token,
  status: record.status,
  challenge_url: record.status === 'challenge' ? `${pages.pagesUrl}/3ds/${record.token}` : null,
  card_token: record.cardToken ?? null,
  card: cardView(record.card, now),
});

/** The payer's answer to the challenge page; a string when there is nothing (left) to answer. */
export function decideChallenge(
  context: CardContext,
  id: string,
  decision: 'approve' | 'refuse',
): TdsRecord | string {
  const record = context.book.tdsAuthentications.get(id);
  if (!record) return 'no such authentication';
  if (record.status !== 'challenge' || expired(record, context.now))
    return 'this authentication is over';
  if (decision === 'approve') {
    record.card = authenticated(record.card, 'Challenge approved');
    record.status = 'authenticated';
    issueToken(context, record);
  } else record.status = 'failed';
  context.state.put(context.book, 'tds', record);
  return record;
}

const expired = (record: TdsRecord, now: Date) =>
  now.getTime() - new Date(record.created).getTime() >= TOKEN_LIFETIME_MS;

/** card.yaml createTdsAuthentication and retrieveTdsAuthentication; challenge pages at `pages`. */
export function tdsOperations(pages: PageAddresses) {
  return {
    createTdsAuthentication(context: CardContext, request: CardRequest): CardAnswer {
      if (!isTdsMerchant(context)) throw new CardError(400, 20015);
      const { body } = request;
      const card = cardFromFields(context, body, { cvvRequired: true });
      // The issuer's verdict before any challenge: the failure card is refused outright.
      if (body.card_number === TDS_FAILURE_CARD) throw new CardError(400, 20012);
      const record: TdsRecord = {
        token: newId('tds'),
        merchantId: context.book.merchant.id,
        seq: context.state.nextSeq(),
        created: context.now.toISOString(),
        status: 'challenge',
        card,
        ...(body.amount !== undefined ? { amount: body.amount as number } : {}),
      };
      if (body.card_number !== TDS_CHALLENGE_CARD) {
        record.card = authenticated(card, 'Frictionless');
        record.status = 'authenticated';
        issueToken(context, record);
      }
      context.state.put(context.book, 'tds', record);
      return ok(view(pages, record, context.now));
    },

    retrieveTdsAuthentication(context: CardContext, request: CardRequest): CardAnswer {
      const record = context.book.tdsAuthentications.get(request.params.authenticationId);
      if (!record) throw new CardError(404, 10002);
      if (record.status === 'failed') throw new CardError(400, 20012);
      if (record.status === 'challenge' && expired(record, context.now))
        throw new CardError(400, 20010);
      return ok(view(pages, record, context.now));
    },
  };
}
