import { createHash } from 'node:crypto';
import { ProblemException } from '#src/platform/errors/problem.js';
import type { AppConfig } from '#src/platform/config/app-config.js';
import type { CardRow } from '../store/card-store.service.js';
import type { WalletTokenizationView } from './card-wallets.dto.js';

/** What a wallet tokenisation row keeps besides its status and card token. */
export type WalletTokenizationData = {
  flow?: 'direct' | 'form';
  md: string;
  return_url: string;
  form?: string;
  payment?: string;
  /** The card token the provider named (kept on a rejected or late result, never chargeable then). */
  token?: string | null;
};

type WalletRow = CardRow<'wallet_token'>;

/** How long a PAN-only tokenisation waits for the payer (the provider's card token lifetime). */
export const WALLET_PENDING_MS = 15 * 60_000;

/** The digest under which a tokenisation's callback reference is found (the reference is not stored). */
export const walletReferenceDigest = (reference: string) =>
  createHash('sha256').update(`wallet:${reference}`, 'utf8').digest('base64url');

export const walletCallbackUrlOf = (config: AppConfig, reference: string) =>
  `${config.http.publicBaseUrl}/v1/card/wallets/callback/${reference}`;

/** A tokenisation's data with `changes` (its row holds the app's md and return_url from its start). */
export const walletData = (
  row: WalletRow,
  changes: Partial<WalletTokenizationData>,
): WalletTokenizationData => ({ md: '', return_url: '', ...row.data, ...changes });

export function walletView(row: WalletRow): WalletTokenizationView {
  const data: Partial<WalletTokenizationData> = row.data ?? {};
  const chargeable = row.status === 'verified' || row.status === 'charged';
  return {
    id: row.id,
    status: row.status,
    flow: data.flow ?? null,
    cardToken: chargeable ? row.token : null,
    form: row.status === 'pending' ? (data.form ?? null) : null,
    amount: row.amount ?? 0,
    currency: 'EUR',
    md: data.md ?? '',
    paymentId: data.payment ?? null,
    returnUrl: data.return_url ?? '',
  };
}

/**
 * A card token of a wallet tokenisation is charged through Portico only once Portico verified the
 * provider's signature over it, and only once: anything else is refused before the provider is called.
 */
export function walletChargeRefusal(row: WalletRow): ProblemException | undefined {
  if (row.status === 'verified') return undefined;
  const payment = row.data?.payment;
  if (row.status === 'charged')
    return new ProblemException({
      status: 409,
      type: 'urn:portico:problem:wallet-token-used',
      title: 'Wallet card token already used',
      detail: `The card token of wallet tokenisation ${row.id} already paid ${payment ?? 'a payment'}`,
      extensions: { code: '20007', tokenizationId: row.id },
    });
  return new ProblemException({
    status: 409,
    type: 'urn:portico:problem:wallet-token-not-verified',
    title: 'Wallet card token not verified',
    detail: `The card token of wallet tokenisation ${row.id} is not verified (${row.status}): it cannot be charged`,
    extensions: { tokenizationId: row.id, resourceStatus: row.status },
  });
}
