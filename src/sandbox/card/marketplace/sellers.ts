import {
  CardError,
  invalid,
  newId,
  ok,
  page,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from '../card-context.js';
import { isValidIban } from '#src/sandbox/open-banking/bank/iban.js';
import type { BankAccountRecord, SellerRecord } from './market-records.js';
import { sellerView } from './market-views.js';

/** A changed IBAN is confirmed by the seller verification a day later (card.yaml updateSeller). */
export const IBAN_VERIFICATION_MS = 86_400_000;

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'] as const;
const DAY_OF_MONTH = /^([1-9]|[12][0-9]|3[01])$/;

/** Banks of the sandbox by IBAN country and bank code (Greek systemic banks); others are generic. */
const BANKS: Record<string, string> = {
  GR011: 'National Bank of Greece',
  GR014: 'Alpha Bank',
  GR017: 'Piraeus Bank',
  GR026: 'Eurobank',
};

type Interval = SellerRecord['payoutInterval'];

/** The days of payout_frequency for an interval: checked, deduplicated, in calendar order. */
function frequencyOf(interval: Interval, raw: string | undefined): string[] {
  if (raw === undefined)
    return interval === 'weekly' ? ['monday'] : interval === 'monthly' ? ['1'] : [];
  const values = [...new Set(raw.split(','))];
  if (interval === 'weekly' && values.every((v) => (WEEKDAYS as readonly string[]).includes(v)))
    return WEEKDAYS.filter((day) => values.includes(day));
  if (interval === 'monthly' && values.every((v) => DAY_OF_MONTH.test(v)))
    return values.sort((a, b) => Number(a) - Number(b));
  throw invalid('payout_frequency');
}

function bankAccount(context: CardContext, iban: string, beneficiary: string, pending: boolean) {
  if (!isValidIban(iban)) throw invalid('bank_account_iban');
  const account: BankAccountRecord = {
    token: newId('bnk'),
    created: context.now.toISOString(),
    iban,
    bankName: BANKS[iban.slice(0, 2) + iban.slice(4, 7)] ?? 'Sandbox Bank',
    beneficiary,
    isDefault: !pending,
    verifiesAt: pending
      ? new Date(context.now.getTime() + IBAN_VERIFICATION_MS).toISOString()
      : null,
  };
  return account;
}

/** Applies the verification of a changed IBAN once its time has come: it becomes the default. */
export function verifyBankAccounts(context: CardContext, seller: SellerRecord): SellerRecord {
  const pending = seller.bankAccounts.find(
    (account) => account.verifiesAt !== null && account.verifiesAt <= context.now.toISOString(),
  );
  if (!pending) return seller;
  for (const account of seller.bankAccounts) account.isDefault = account === pending;
  pending.verifiesAt = null;
  context.state.put(context.book, 'seller', seller);
  return seller;
}

export function knownSeller(context: CardContext, id: string): SellerRecord {
  const seller = context.book.sellers.get(id);
  if (!seller) throw new CardError(404, 60001, id);
  return verifyBankAccounts(context, seller);
}

export function createSeller(context: CardContext, request: CardRequest): CardAnswer {
  const body = request.body as Record<string, string | number | undefined>;
  const interval = (body.payout_interval as Interval | undefined) ?? 'daily';
  const created = context.now.toISOString();
  const seller: SellerRecord = {
    token: newId('sel'),
    merchantId: context.book.merchant.id,
    seq: context.state.nextSeq(),
    created,
    modified: created,
    status: 'Authorized',
    email: body.email as string,
    contactPhone: body.contact_phone as string,
    description: body.description as string,
    business: {
      name: body.business_name as string,
      title: body.business_title as string,
      taxNumber: body.business_tax_number as string,
      address: body.business_address as string,
    },
    bankAccounts: [
      bankAccount(
        context,
        body.bank_account_iban as string,
        body.bank_account_beneficiary as string,
        false,
      ),
    ],
    payoutInterval: interval,
    payoutFrequency: frequencyOf(interval, body.payout_frequency as string | undefined),
    threshold: (body.payout_threshold_amount as number | undefined) ?? 0,
    payoutsOnHold: body.payouts_on_hold === 1,
    isC2c: body.is_c2c === undefined ? null : body.is_c2c === 1,
    available: 0,
    held: 0,
    lastPayoutDay: null,
  };
  context.state.put(context.book, 'seller', seller);
  return ok(sellerView(seller));
}

export function retrieveSeller(context: CardContext, request: CardRequest): CardAnswer {
  return ok(sellerView(knownSeller(context, request.params.sellerId)));
}

export function retrieveSellerBalance(context: CardContext, request: CardRequest): CardAnswer {
  return ok({ available_amount: knownSeller(context, request.params.sellerId).available });
}

export function updateSeller(context: CardContext, request: CardRequest): CardAnswer {
  const seller = knownSeller(context, request.params.sellerId);
  const body = request.body as Record<string, string | number | undefined>;
  if (seller.status === 'Closed') throw new CardError(400, 60023, seller.token);
  const iban = body.bank_account_iban as string | undefined;
  const beneficiary = body.bank_account_beneficiary as string | undefined;
  if ((iban === undefined) !== (beneficiary === undefined))
    throw invalid(iban === undefined ? 'bank_account_iban' : 'bank_account_beneficiary');
  // Everything is checked before anything changes.
  const interval = (body.payout_interval as Interval | undefined) ?? seller.payoutInterval;
  const frequency =
    body.payout_frequency !== undefined || body.payout_interval !== undefined
      ? frequencyOf(interval, body.payout_frequency as string | undefined)
      : seller.payoutFrequency;
  const current = seller.bankAccounts.find((account) => account.isDefault) as BankAccountRecord;
  const added =
    iban !== undefined && iban !== current.iban
      ? bankAccount(context, iban, beneficiary as string, true)
      : undefined;
  seller.payoutInterval = interval;
  seller.payoutFrequency = frequency;
  if (added)
    seller.bankAccounts = [
      ...seller.bankAccounts.filter((other) => other.verifiesAt === null),
      added,
    ];
  else if (beneficiary !== undefined) current.beneficiary = beneficiary;
  if (body.email !== undefined) seller.email = body.email as string;
  if (body.description !== undefined) seller.description = body.description as string;
  if (body.business_name !== undefined) seller.business.name = body.business_name as string;
  if (body.business_title !== undefined) seller.business.title = body.business_title as string;
  if (body.business_address !== undefined)
    seller.business.address = body.business_address as string;
  if (body.payout_threshold_amount !== undefined)
    seller.threshold = body.payout_threshold_amount as number;
  if (body.payouts_on_hold !== undefined) seller.payoutsOnHold = body.payouts_on_hold === 1;
  seller.modified = context.now.toISOString();
  context.state.put(context.book, 'seller', seller);
  return ok(sellerView(seller));
}

export function listSellers(context: CardContext, request: CardRequest): CardAnswer {
  const { query } = request;
  const taxNumber = query.tax_number as string | undefined;
  const onHold = query.payouts_on_hold as number | undefined;
  const sellers = [...context.book.sellers.values()]
    .map((seller) => verifyBankAccounts(context, seller))
    .filter(
      (seller) =>
        (taxNumber === undefined || seller.business.taxNumber === taxNumber) &&
        (onHold === undefined || seller.payoutsOnHold === (onHold === 1)),
    );
  return page(sellers, query, sellerView);
}
