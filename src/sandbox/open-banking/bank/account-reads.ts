import { type LedgerAccount } from './account-model.js';
import { accountDto, accountPath, transactionDto } from './account-views.js';
import { type BankContext } from './bank-state.js';
import { consentFromHeader } from './consent-header.js';
import { coveredIbans, grants, type AisConsent } from './consent-model.js';
import { utcDay } from './dates.js';
import { fail } from './errors.js';
import { href, requireBrand } from './request-context.js';
import { type BankRequest, type BankResponse } from './types.js';
import { countUnattendedRead } from './unattended-access.js';

/** The five account reads (AIS). Each checks the consent, then the account, then the service, then the daily cap. */

function readingConsent(context: BankContext, request: BankRequest): AisConsent {
  requireBrand(request);
  return consentFromHeader(context, request, 'ais');
}

/**
 * The path's account if the consent covers it in any list. An account outside it is 404
 * RESOURCE_UNKNOWN (Berlin Group's code for an account-id in the path unknown relative to the TPP),
 * the same answer as for an id that is no account at all.
 */
function coveredAccount(
  context: BankContext,
  request: BankRequest,
  consent: AisConsent,
): LedgerAccount {
  const account = context.state.ledger.byResourceId(
    consent.brandId,
    request.params.accountId ?? '',
  );
  if (!account || !coveredIbans(consent.access).includes(account.seed.iban)) {
    fail(404, 'RESOURCE_UNKNOWN', 'Account is not covered by the consent', 'accountId');
  }
  return account;
}

/** Covered, but the consent does not grant this service for it: psd2.yaml answers 401 CONSENT_INVALID. */
function requireGrant(
  consent: AisConsent,
  service: 'balances' | 'transactions',
  account: LedgerAccount,
): void {
  if (!grants(consent.access, service, account.seed.iban)) {
    fail(
      401,
      'CONSENT_INVALID',
      `Consent does not grant ${service} for this account`,
      'Consent-ID',
    );
  }
}

export function listAccounts(context: BankContext, request: BankRequest): BankResponse {
  const consent = readingConsent(context, request);
  const ibans = coveredIbans(consent.access);
  const accounts = context.state.ledger
    .atBrand(consent.brandId)
    .filter((account) => ibans.includes(account.seed.iban));
  countUnattendedRead(context, request, consent);
  return {
    status: 200,
    body: { accounts: accounts.map((account) => accountDto(account, consent.access, false)) },
  };
}

export function getAccountDetails(context: BankContext, request: BankRequest): BankResponse {
  const consent = readingConsent(context, request);
  const account = coveredAccount(context, request, consent);
  countUnattendedRead(context, request, consent);
  return { status: 200, body: { account: accountDto(account, consent.access, true) } };
}

export function getBalances(context: BankContext, request: BankRequest): BankResponse {
  const consent = readingConsent(context, request);
  const account = coveredAccount(context, request, consent);
  requireGrant(consent, 'balances', account);
  countUnattendedRead(context, request, consent);
  return {
    status: 200,
    body: {
      account: { iban: account.seed.iban },
      balances: context.state.ledger.balances(account, context.now()),
    },
  };
}

export function getTransactions(context: BankContext, request: BankRequest): BankResponse {
  const consent = readingConsent(context, request);
  const account = coveredAccount(context, request, consent);
  requireGrant(consent, 'transactions', account);
  const { dateFrom, dateTo } = request.query;
  if (!dateFrom) fail(400, 'FORMAT_ERROR', 'Query parameter dateFrom is missing', 'dateFrom');
  if (!dateTo) fail(400, 'FORMAT_ERROR', 'Query parameter dateTo is missing', 'dateTo');
  if (dateFrom > dateTo) fail(400, 'PERIOD_INVALID', 'dateFrom lies after dateTo', 'dateFrom');
  const bookingStatus = requestedBookingStatus(request);
  // Both ends inclusive; booked entries count by booking day, pending ones by value day.
  const inPeriod = (day: Date | undefined) =>
    day !== undefined && utcDay(day) >= dateFrom && utcDay(day) <= dateTo;
  const lists: Record<string, unknown> = {};
  if (bookingStatus !== 'pending')
    lists.booked = account.booked
      .filter((entry) => inPeriod(entry.bookingDate))
      .map((entry) => transactionDto(entry, false));
  if (bookingStatus !== 'booked')
    lists.pending = account.pending
      .filter((entry) => inPeriod(entry.valueDate))
      .map((entry) => transactionDto(entry, false));
  countUnattendedRead(context, request, consent);
  return {
    status: 200,
    body: {
      account: { iban: account.seed.iban },
      transactions: { ...lists, _links: { account: href(accountPath(consent.brandId, account)) } },
    },
  };
}

const SUPPORTED_BOOKING_STATUSES = ['booked', 'pending', 'both'] as const;
type SupportedBookingStatus = (typeof SUPPORTED_BOOKING_STATUSES)[number];

/** `bookingStatus`, `both` when absent; Berlin Group's `information` and `all` are not supported here. */
function requestedBookingStatus(request: BankRequest): SupportedBookingStatus {
  const value = request.query.bookingStatus;
  if (value === undefined || value === '') return 'both';
  if ((SUPPORTED_BOOKING_STATUSES as readonly string[]).includes(value))
    return value as SupportedBookingStatus;
  if (value === 'information' || value === 'all')
    fail(
      400,
      'PARAMETER_NOT_SUPPORTED',
      `bookingStatus ${value} is not supported; use booked, pending or both`,
      'bookingStatus',
    );
  fail(400, 'FORMAT_ERROR', 'bookingStatus must be booked, pending or both', 'bookingStatus');
}

export function getTransactionDetails(context: BankContext, request: BankRequest): BankResponse {
  const consent = readingConsent(context, request);
  const account = coveredAccount(context, request, consent);
  requireGrant(consent, 'transactions', account);
  const transactionId = request.params.transactionId ?? '';
  const entry = [...account.booked, ...account.pending].find(
    (candidate) => candidate.transactionId === transactionId,
  );
  if (!entry) fail(404, 'RESOURCE_UNKNOWN', 'Transaction is not known', 'transactionId');
  countUnattendedRead(context, request, consent);
  return { status: 200, body: { transactionsDetails: transactionDto(entry, true) } };
}
