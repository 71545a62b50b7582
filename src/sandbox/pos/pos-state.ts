/** What the payer (or the terminal) does with a payment shown on the terminal. */
export type PayerAction = 'approve' | 'decline' | 'cancel';
/** A terminal's default: an action after a delay, or `never` (the terminal does not report). */
export interface TerminalOutcome {
  action: PayerAction | 'never';
  afterMs: number;
}

export interface PosMerchant {
  merchantId: string;
  posKey: string;
  mid: string;
  company: string;
}

export interface Terminal {
  token: string;
  merchantId: string;
  seq: number;
  tid: string;
  mid: string;
  company: string;
  status: 'enabled' | 'disabled';
  dateOnboarded: string;
  connected: boolean;
  /** Busy on its own (a fixture), besides while a transaction of the API is in flight on it. */
  busy: boolean;
  /** Takes payments without acknowledging them (stays INITIATING; the hold ends in 10004). */
  unresponsive?: boolean;
  /** Virtual cash register: its id, the secret its signatures are made with, and whether it is checked. */
  cashRegister?: { id: string; secret: string; validation: boolean };
  erpLinked: boolean;
  outcome: TerminalOutcome;
  /** How long the provider holds a payment request for the terminal's decision (the seed's 180 s). */
  holdMs: number;
  /** The open batch's number; numbers below it are settled. */
  batch: number;
  /** The transaction in flight on it. */
  current?: string;
}

export type PosStatus =
  'INITIATING' | 'PENDING' | 'CAPTURED' | 'FAILED' | 'CANCELLED' | 'DEVICE_NOT_CONNECTED';

export interface PosTransaction {
  transactionId: string;
  merchantId: string;
  terminal: string;
  type: 'payment' | 'void' | 'refund';
  status: PosStatus;
  amount: number;
  tip: number;
  currency: 'EUR';
  metadata?: Record<string, string>;
  originalTransactionId?: string;
  /** Sandbox-clock time it was received (ms). */
  receivedAt: number;
  /** Set once decided (sandbox clock, ms). */
  decidedAt?: number;
  card?: {
    cardType: string;
    cardNumber: string;
    authorizationCode: string;
    aadeTransactionId: string;
    acquirerId: string;
    rrn: string;
  };
  batch?: number;
  /** The void that voided it. */
  voidedBy?: string;
  /** Made on the terminal itself and not reported to the merchant's ERP (get-pending lists it). */
  erpPending?: boolean;
}

export const isFinal = (status: PosStatus) =>
  status === 'CAPTURED' || status === 'FAILED' || status === 'CANCELLED';

/** `YYYY-MM-DD hh:mm:ss AM` (UTC), as the seed shows transaction times. */
export function transactionTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  const hours = Number(iso.slice(11, 13));
  const twelve = String(hours % 12 === 0 ? 12 : hours % 12).padStart(2, '0');
  return `${iso.slice(0, 10)} ${twelve}:${iso.slice(14, 19)} ${hours < 12 ? 'AM' : 'PM'}`;
}

/** `YYYY-MM-DD hh:mm:ss` (UTC). */
export const dateTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
