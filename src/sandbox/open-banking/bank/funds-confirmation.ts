import { type BankContext } from './bank-state.js';
import { consentFromHeader } from './consent-header.js';
import { type AccountReference } from './consent-model.js';
import { fail } from './errors.js';
import { parseAmount } from './money.js';
import { requireBrand } from './request-context.js';
import { type BankRequest, type BankResponse } from './types.js';

interface ConfirmationOfFundsBody {
  account: AccountReference;
  instructedAmount: { currency: string; amount: string };
}

/** PIIS: compares the amount with interimAvailable; insufficient funds is a normal 200 answer. */
export function confirmFunds(context: BankContext, request: BankRequest): BankResponse {
  requireBrand(request);
  const consent = consentFromHeader(context, request, 'cof');
  const body = request.body as ConfirmationOfFundsBody;
  if (body.account.iban !== consent.account.iban) {
    fail(401, 'CONSENT_INVALID', 'Consent does not cover this account', 'account.iban');
  }
  const account = context.state.ledger.byIban(consent.brandId, consent.account.iban);
  // A valid consent was authorised on an existing account of the PSU; its absence would be a sandbox bug.
  if (!account) fail(401, 'CONSENT_INVALID', 'Consent account no longer exists', 'account.iban');
  if (body.instructedAmount.currency !== account.seed.currency) {
    fail(
      400,
      'PARAMETER_NOT_CONSISTENT',
      `instructedAmount.currency must be the account currency ${account.seed.currency}`,
      'instructedAmount.currency',
    );
  }
  const fundsAvailable =
    account.seed.status === 'enabled' &&
    parseAmount(body.instructedAmount.amount) <= context.state.ledger.available(account);
  return { status: 200, body: { fundsAvailable } };
}
