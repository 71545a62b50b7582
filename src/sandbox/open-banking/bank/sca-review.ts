import { type LedgerAccount } from './account-model.js';
import { type BankContext } from './bank-state.js';
import {
  coveredIbans,
  isBankOffered,
  type AccountReference,
  type AisConsent,
  type CofConsent,
  type Consent,
} from './consent-model.js';
import { paymentFacts, type Payment } from './payment-model.js';
import { type AccountOption, type ReviewFact, type ReviewView } from './sca-pages.js';

/** What the review page shows for a consent or payment, and whether this PSU may approve it. */
export interface ReviewPlan {
  heading: string;
  facts: ReviewFact[];
  choice?: ReviewView['choice'];
  /** Set when the PSU cannot approve (accounts that are not theirs); only Deny is offered. */
  problem?: string;
}

export type ScaTarget =
  { kind: 'consent'; consent: Consent } | { kind: 'payment'; payment: Payment };

export function accountOptions(accounts: readonly LedgerAccount[]): AccountOption[] {
  return accounts.map((account) => ({
    iban: account.seed.iban,
    label: `${account.seed.name} - ${account.seed.iban} (${account.seed.currency}${account.seed.status === 'blocked' ? ', blocked' : ''})`,
  }));
}

function notOwned(ibans: readonly string[], owned: readonly LedgerAccount[]): string[] {
  return ibans.filter((iban) => !owned.some((account) => account.seed.iban === iban));
}

function problemWith(foreign: readonly string[]): string | undefined {
  return foreign.length === 0
    ? undefined
    : `This request names accounts that are not yours at this bank: ${foreign.join(', ')}. You can only deny it.`;
}

const ibanList = (references: readonly AccountReference[] | undefined) =>
  (references ?? []).map((reference) => reference.iban).join(', ');

function aisPlan(consent: AisConsent, owned: readonly LedgerAccount[]): ReviewPlan {
  const facts: ReviewFact[] = [{ term: 'Requested by', detail: consent.tppId }];
  let choice: ReviewView['choice'];
  if (isBankOffered(consent.access)) {
    facts.push({
      term: 'Access',
      detail: 'Account details, balances and transactions of the accounts you choose',
    });
    choice = { field: 'accounts', legend: 'Accounts to share', options: accountOptions(owned) };
  } else {
    const { accounts, balances, transactions } = consent.access;
    if (accounts?.length) facts.push({ term: 'Account details', detail: ibanList(accounts) });
    if (balances?.length) facts.push({ term: 'Balances', detail: ibanList(balances) });
    if (transactions?.length) facts.push({ term: 'Transactions', detail: ibanList(transactions) });
  }
  facts.push(
    { term: 'Valid until', detail: consent.validUntil },
    { term: 'Recurring', detail: consent.recurringIndicator ? 'Yes' : 'No, one-off access' },
    { term: 'Access without you', detail: `At most ${consent.frequencyPerDay} times a day` },
  );
  const problem = problemWith(notOwned(coveredIbans(consent.access), owned));
  return {
    heading: 'Share account information',
    facts,
    ...(choice ? { choice } : {}),
    ...(problem ? { problem } : {}),
  };
}

function cofPlan(consent: CofConsent, owned: readonly LedgerAccount[]): ReviewPlan {
  const problem = problemWith(notOwned([consent.account.iban], owned));
  return {
    heading: 'Allow funds checks',
    facts: [
      { term: 'Requested by', detail: consent.tppId },
      { term: 'Account', detail: consent.account.iban },
      {
        term: 'Access',
        detail:
          'The provider may ask whether an amount is available on this account; it does not see your balance.',
      },
    ],
    ...(problem ? { problem } : {}),
  };
}

function paymentPlan(payment: Payment, owned: readonly LedgerAccount[]): ReviewPlan {
  const facts = paymentFacts(payment.details);
  const address = payment.details.creditorAddress as Record<string, string> | undefined;
  const shown: ReviewFact[] = [
    { term: 'Requested by', detail: payment.tppId },
    { term: 'Amount', detail: `${facts.amount} ${facts.currency}` },
    { term: 'To', detail: facts.creditorName },
    { term: 'Creditor account', detail: facts.creditorIban },
  ];
  if (typeof payment.details.creditorAgent === 'string')
    shown.push({ term: 'Creditor bank (BIC)', detail: payment.details.creditorAgent });
  if (address) {
    const parts = [
      address.streetName,
      address.buildingNumber,
      address.postCode,
      address.townName,
      address.country,
    ].filter((part) => part !== undefined);
    shown.push({ term: 'Creditor address', detail: parts.join(' ') });
  }
  shown.push(
    { term: 'Reference', detail: facts.remittance },
    { term: 'Payment type', detail: payment.product },
  );
  if (facts.debtorIban !== undefined) {
    shown.push({ term: 'From account', detail: facts.debtorIban });
    const problem = problemWith(notOwned([facts.debtorIban], owned));
    return { heading: 'Approve a payment', facts: shown, ...(problem ? { problem } : {}) };
  }
  return {
    heading: 'Approve a payment',
    facts: shown,
    choice: { field: 'debtorAccount', legend: 'Pay from', options: accountOptions(owned) },
  };
}

export function reviewPlan(
  context: BankContext,
  target: ScaTarget,
  brandId: string,
  username: string,
): ReviewPlan {
  const owned = context.state.ledger.ownedBy(username, brandId);
  if (target.kind === 'payment') return paymentPlan(target.payment, owned);
  return target.consent.kind === 'ais'
    ? aisPlan(target.consent, owned)
    : cofPlan(target.consent, owned);
}

/** One line for the login page. */
export function purposeOf(target: ScaTarget): string {
  if (target.kind === 'payment') {
    const facts = paymentFacts(target.payment.details);
    return `${target.payment.tppId} asks you to approve a payment of ${facts.amount} ${facts.currency} to ${facts.creditorName}.`;
  }
  return target.consent.kind === 'ais'
    ? `${target.consent.tppId} asks for access to your account information.`
    : `${target.consent.tppId} asks to check the availability of funds on your account.`;
}
