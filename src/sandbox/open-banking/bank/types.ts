import type { BankStateStore, StateRow } from './state-journal.js';
import type { ConsentStatus } from './consent-model.js';
import type { TransactionStatus } from './payment-model.js';

/**
 * Public shapes of the sandbox bank: what the HTTP layer hands in and gets back.
 * The bank never sees sockets, certificates or raw JSON; the HTTP layer has already
 * checked the certificate role and validated the request against openapi/psd2.yaml.
 */

export interface BankRequest {
  /** One of the 18 operationIds of openapi/psd2.yaml. */
  operationId: string;
  /** Path parameters: brandId, consentId, paymentProduct, paymentId, accountId, transactionId. */
  params: Record<string, string>;
  /** Query parameters, already format-checked (dateFrom, dateTo as YYYY-MM-DD). */
  query: Record<string, string | undefined>;
  /** Lower-case header names: x-request-id, consent-id, psu-ip-address, tpp-redirect-uri, tpp-nok-redirect-uri. */
  headers: Record<string, string | undefined>;
  /** JSON body, already validated against the operation's request schema. */
  body: unknown;
  /** organizationIdentifier of the caller's certificate; consents and payments belong to the TPP that created them. */
  tppId: string;
}

export interface BankResponse {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/** A request to the PSU-facing authorisation pages (plain HTML forms). */
export interface ScaRequest {
  method: 'GET' | 'POST';
  path: string;
  query: Record<string, string | undefined>;
  form: Record<string, string | string[] | undefined>;
}

export interface ScaResponse {
  status: number;
  headers?: Record<string, string>;
  /** text/html */
  body?: string;
}

/**
 * One entry of psd2.yaml `PaymentDetails.x-portico-product-rules`.
 * `required` holds dotted paths into the payment body; a dotted entry implies its parent is required.
 */
export interface ProductRule {
  aliases?: readonly string[];
  /** Absent: any ISO 4217 currency is allowed. */
  currencies?: readonly string[];
  required: readonly string[];
  schema?: unknown;
}

/**
 * The parsed `x-portico-product-rules` object, keyed by canonical product name.
 * The YAML also carries a free-text `notes` entry, so non-object values are allowed and ignored.
 */
export type ProductRules = Readonly<Record<string, ProductRule | string>>;

export interface SandboxBankOptions {
  /** Absolute base URL of the PSU-facing pages, e.g. https://localhost:8443 (no trailing slash needed). */
  scaBaseUrl: string;
  now?: () => Date;
  productRules: ProductRules;
  /** Where every change is written; without one the bank keeps its state in memory only. */
  store?: BankStateStore;
  /** The rows the store held at start: the bank carries on from them. */
  storedState?: readonly StateRow[];
}

export interface SandboxBankControl {
  /** The PSU withdraws a `valid` consent at the bank; false when the consent is unknown or not `valid`. */
  revokeConsentAsPsu(consentId: string): boolean;
  /** The bank changes a consent's status outside the TPP, or forgets it; false when it is unknown. */
  actOnConsent(consentId: string, change: { status: ConsentStatus } | 'forget'): boolean;
  /** The bank changes a payment's status or amount outside the TPP, or forgets it; false when unknown. */
  actOnPayment(
    paymentId: string,
    change: { status?: TransactionStatus; amount?: string } | 'forget',
  ): boolean;
  /** How often each operationId was handled, for tests proving that the gateway did or did not call upstream. */
  calls(): Record<string, number>;
  /**
   * The X-Request-IDs of the calls of an operation handled since start, oldest first (at least
   * the latest 50,000): lets a test match each call the bank served with the gateway's access-log row for it.
   */
  requestIds(operationId: string): string[];
  /**
   * Forget all consents, payments, authorisations, sessions, counters and booked payments, in the
   * store too, and rebuild the account data from now(). `SandboxBank.persisted()` tells when the
   * store has followed.
   */
  reset(): void;
}
