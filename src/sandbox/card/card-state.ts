import type { AnswerStyle } from './answer-style.js';
import type { CardFacts } from './card-numbers.js';
import type { IrisSessionRecord } from './iris/iris-record.js';
import type { MailRecord, NotificationRecord } from './notifications/notification-record.js';
import type {
  LedgerEntryRecord,
  MarketRecord,
  PayoutRecord,
  ReversalRecord,
  SellerRecord,
  TransferRecord,
} from './marketplace/market-records.js';
import type { DomainRecord, WalletRecord } from './wallets/wallet-records.js';

/** A stored card: the facts of its number (never the number), its expiry and holder. */
export interface StoredCard extends CardFacts {
  token: string;
  expirationMonth: string;
  expirationYear: string;
  holderName: string;
  /** The customer it belongs to, once stored with one. */
  customer?: string;
  /** Its 3-D Secure authentication, when tokenised through the provider's browser page. */
  tds?: { enrolled: string; eciFlag: string; authCode: string | null; authDesc: string };
  created: string;
  seq: number;
}

export interface Merchant {
  id: string;
  name: string;
  secretKey: string;
  publicKey: string;
  created: string;
  /** The registered webhook of bank payments (IRIS), set by a sandbox control. */
  webhookUrl?: string;
  /** How its answers spell what the seed and the provider's clients differ on (a sandbox control). */
  answerStyle?: AnswerStyle;
  /** `3dsecure`: card arguments only through the browser's 3-D Secure tokenisation (chosen at creation). */
  type?: MerchantType;
}

export type MerchantType = 'standard' | '3dsecure';

/** A 3-D Secure authentication of a card in the payer's browser (tds/). */
export interface TdsRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  status: 'challenge' | 'authenticated' | 'failed';
  card: StoredCard;
  amount?: number;
  /** The card token it made, once authenticated. */
  cardToken?: string;
}

export interface PaymentRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  description: string;
  status: string;
  amount: number;
  fee: number;
  payeeEmail: string | null;
  payeePhone: string | null;
  merchantRef: string | null;
  /** Null for a bank payment (IRIS source). */
  card: StoredCard | null;
  metadata: Record<string, string>;
  refundAmount: number;
  refunds: string[];
  /** The child payments of an installment payment (`Pending installment` until due). */
  installments: { token?: string; amount: number; fee?: number; dueDate: string }[];
  split: boolean;
  mandate?: string;
  mandateReference?: string;
  branchToken: string;
}

export interface RefundRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  status: 'Captured' | 'Failed';
  amount: number;
  fee: number;
  description: string;
  metadata: Record<string, string>;
  payment: string;
}

export interface CardTokenRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  amount?: number;
  used: boolean;
  card: StoredCard;
}

export interface CustomerRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  modified: string;
  description: string | null;
  fullName: string | null;
  email: string | null;
  active: boolean;
  cards: StoredCard[];
  defaultCard: string;
}

export interface MandateRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  customer: string;
  status: 'valid' | 'revoked';
  reference: string | null;
  card: StoredCard;
}

export interface BranchRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  title: string;
  description: string | null;
  streetNumber: string | null;
  street: string | null;
  postalCode: string | null;
  addressArea: string | null;
}

/** The kinds of rows the card side keeps (table `card_state` of the sandbox's schema). */
export type CardRecordKind =
  | 'payment'
  | 'refund'
  | 'token'
  | 'customer'
  | 'mandate'
  | 'branch'
  | 'notification'
  | 'iris'
  | 'mail'
  | 'wallet'
  | 'domain'
  | 'tds'
  | MarketRecordKind;
/** The marketplace's kinds (marketplace/market-records.ts). */
export type MarketRecordKind = 'seller' | 'transfer' | 'reversal' | 'payout' | 'entry' | 'market';
export type CardStateKind = CardRecordKind | 'merchant' | 'clock';

export interface CardStateRow {
  kind: CardStateKind;
  id: string;
  data: unknown;
}

interface CardRecords {
  payment: PaymentRecord;
  refund: RefundRecord;
  token: CardTokenRecord;
  customer: CustomerRecord;
  mandate: MandateRecord;
  branch: BranchRecord;
  notification: NotificationRecord;
  iris: IrisSessionRecord;
  mail: MailRecord;
  wallet: WalletRecord;
  domain: DomainRecord;
  tds: TdsRecord;
  seller: SellerRecord;
  transfer: TransferRecord;
  reversal: ReversalRecord;
  payout: PayoutRecord;
  entry: LedgerEntryRecord;
  market: MarketRecord;
}

type RecordOf<K extends CardRecordKind> = CardRecords[K];

/** One merchant's records: nothing of one merchant is reachable from another's book. */
export class MerchantBook {
  readonly payments = new Map<string, PaymentRecord>();
  readonly refunds = new Map<string, RefundRecord>();
  readonly tokens = new Map<string, CardTokenRecord>();
  readonly customers = new Map<string, CustomerRecord>();
  readonly mandates = new Map<string, MandateRecord>();
  readonly branches = new Map<string, BranchRecord>();
  readonly notifications = new Map<string, NotificationRecord>();
  readonly irisSessions = new Map<string, IrisSessionRecord>();
  readonly mails = new Map<string, MailRecord>();
  /** Web-wallet tokenisations and device-wallet domains (wallets/). */
  readonly wallets = new Map<string, WalletRecord>();
  readonly domains = new Map<string, DomainRecord>();
  readonly tdsAuthentications = new Map<string, TdsRecord>();
  readonly sellers = new Map<string, SellerRecord>();
  readonly transfers = new Map<string, TransferRecord>();
  readonly reversals = new Map<string, ReversalRecord>();
  readonly payouts = new Map<string, PayoutRecord>();
  readonly entries = new Map<string, LedgerEntryRecord>();
  /** The marketplace's balances and settings (one record, by the merchant's id). */
  readonly markets = new Map<string, MarketRecord>();
  /** merchant_ref -> payment. */
  readonly merchantRefs = new Map<string, string>();

  constructor(readonly merchant: Merchant) {}

  map<K extends CardRecordKind>(kind: K): Map<string, RecordOf<K>> {
    const maps: { [P in CardRecordKind]: Map<string, CardRecords[P]> } = {
      payment: this.payments,
      refund: this.refunds,
      token: this.tokens,
      customer: this.customers,
      mandate: this.mandates,
      branch: this.branches,
      notification: this.notifications,
      iris: this.irisSessions,
      mail: this.mails,
      wallet: this.wallets,
      domain: this.domains,
      tds: this.tdsAuthentications,
      seller: this.sellers,
      transfer: this.transfers,
      reversal: this.reversals,
      payout: this.payouts,
      entry: this.entries,
      market: this.markets,
    };
    return maps[kind];
  }
}

/**
 * Everything the card side remembers, by merchant, and the rows changed since they were last taken
 * (what the state store must write after an operation).
 */
export class CardState {
  readonly books = new Map<string, MerchantBook>();
  /** API key -> merchant and kind. */
  readonly keys = new Map<string, { merchantId: string; kind: 'secret' | 'public' }>();
  /** How far the sandbox clock is ahead of the real one. */
  clockOffsetMs = 0;
  seq = 0;
  private changed = new Map<string, CardStateRow>();

  addMerchant(merchant: Merchant): MerchantBook {
    const book = new MerchantBook(merchant);
    this.books.set(merchant.id, book);
    this.keys.set(merchant.secretKey, { merchantId: merchant.id, kind: 'secret' });
    this.keys.set(merchant.publicKey, { merchantId: merchant.id, kind: 'public' });
    this.note({ kind: 'merchant', id: merchant.id, data: merchant });
    return book;
  }

  /** Notes a change of a merchant's own record (its webhook). */
  touchMerchant(merchant: Merchant): void {
    this.note({ kind: 'merchant', id: merchant.id, data: merchant });
  }

  /** Stores (or notes the change of) a record of a merchant. */
  put<K extends CardRecordKind>(book: MerchantBook, kind: K, record: RecordOf<K>): void {
    book.map(kind).set(record.token, record);
    if (kind === 'payment') {
      const payment = record as PaymentRecord;
      if (payment.merchantRef) book.merchantRefs.set(payment.merchantRef, payment.token);
    }
    this.note({ kind, id: record.token, data: record });
  }

  setClock(offsetMs: number): void {
    this.clockOffsetMs = offsetMs;
    this.note({ kind: 'clock', id: 'clock', data: { offsetMs } });
  }

  nextSeq(): number {
    return ++this.seq;
  }

  /** The rows changed since the last call, as JSON copies. */
  takeChanged(): CardStateRow[] {
    const rows = [...this.changed.values()].map((row) => ({
      ...row,
      data: JSON.parse(JSON.stringify(row.data)) as unknown,
    }));
    this.changed = new Map();
    return rows;
  }

  /** A state rebuilt from stored rows. */
  static restore(rows: readonly CardStateRow[]): CardState {
    const state = new CardState();
    for (const row of rows.filter((r) => r.kind === 'merchant'))
      state.addMerchant(row.data as Merchant);
    for (const row of rows) {
      if (row.kind === 'clock') state.clockOffsetMs = (row.data as { offsetMs: number }).offsetMs;
      if (row.kind === 'merchant' || row.kind === 'clock') continue;
      // The rows this state wrote (takeChanged): each kind's record as it was.
      const record = row.data as RecordOf<typeof row.kind>;
      const book = state.books.get(record.merchantId);
      if (!book) continue;
      state.put(book, row.kind, record);
      state.seq = Math.max(state.seq, record.seq);
    }
    state.changed = new Map();
    return state;
  }

  private note(row: CardStateRow): void {
    this.changed.set(`${row.kind}|${row.id}`, row);
  }
}
