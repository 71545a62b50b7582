import { randomBytes } from 'node:crypto';
import {
  CardError,
  newId,
  type CardAnswer,
  type CardContext,
  type CardRequest,
} from './card-context.js';
import {
  createCardToken,
  createCustomer,
  createCustomerCard,
  deleteCustomer,
  deleteCustomerCard,
  deleteCustomerCardAlias,
  deleteMandate,
  listBranches,
  listCustomerCards,
  listCustomerMandates,
  listCustomers,
  retrieveCardToken,
  retrieveCustomer,
  retrieveCustomerCard,
  updateCustomer,
} from './card-customers.js';
import {
  capturePayment,
  createPayment,
  listPayments,
  retrievePayment,
  updatePayment,
} from './card-payments.js';
import { createRefund, listRefunds, refundPaymentAlias, retrieveRefund } from './card-refunds.js';
import {
  CardState,
  type CardStateKind,
  type CardStateRow,
  type MerchantBook,
  type MerchantType,
} from './card-state.js';
import type { StoredRows } from '../persistence/sandbox-state-store.js';
import { irisOperations } from './iris/iris-sessions.js';
import type { IrisDeliveryPlan } from './iris/iris-record.js';
import { notificationOperations, type PageAddresses } from './notifications/notifications.js';
import { MARKETPLACE_OPERATIONS } from './marketplace/marketplace-operations.js';
import { tdsOperations } from './tds/tds-authentications.js';
import {
  deleteDeviceWalletDomains,
  listDeviceWalletDomains,
  registerDeviceWalletDomains,
  walletOperations,
} from './wallets/wallets.js';

type Operation = (context: CardContext, request: CardRequest) => CardAnswer;

/** card.yaml operationId -> implementation. */
const OPERATIONS: Readonly<Record<string, Operation>> = {
  createPayment,
  listPayments,
  retrievePayment,
  updatePayment,
  capturePayment,
  capturePaymentAlias: capturePayment,
  refundPaymentAlias,
  createRefund,
  listRefunds,
  retrieveRefund,
  createCardToken,
  retrieveCardToken,
  createCustomer,
  listCustomers,
  retrieveCustomer,
  updateCustomer,
  deleteCustomer,
  createCustomerCard,
  listCustomerCards,
  retrieveCustomerCard,
  deleteCustomerCard,
  deleteCustomerCardAlias,
  listCustomerMandates,
  deleteMandate,
  listBranches,
  registerDeviceWalletDomains,
  listDeviceWalletDomains,
  deleteDeviceWalletDomains,
  ...MARKETPLACE_OPERATIONS,
};

/** Part 2 (notifications, IRIS): their links point at the sandbox's page listener. */
const operationsWithPages = (pages: PageAddresses): Readonly<Record<string, Operation>> => ({
  ...OPERATIONS,
  ...notificationOperations(pages),
  ...irisOperations(pages),
  ...walletOperations(pages),
  ...tdsOperations(pages),
});

/** Where the card side's rows are kept. */
export interface CardStateStore {
  write(changes: StoredRows<CardStateKind>): Promise<void>;
}

/** The branches every sandbox merchant starts with (card.yaml listBranches). */
const SEEDED_BRANCHES = [
  {
    title: 'Head office',
    description: 'Main shop',
    streetNumber: '12',
    street: 'Ermou',
    postalCode: '10563',
    addressArea: 'Athens',
  },
  {
    title: 'Airport kiosk',
    description: null,
    streetNumber: null,
    street: 'Attiki Odos',
    postalCode: '19019',
    addressArea: 'Spata',
  },
];

const keyOf = (prefix: 'sk' | 'pk') => `${prefix}_sandbox_${randomBytes(18).toString('base64url')}`;

/** Who a key belongs to. */
export type KeyOwner = { merchantId: string; kind: 'secret' | 'public' } | undefined;

/**
 * The provider's card API as in-memory state organised by merchant, without HTTP: the listener
 * authenticates, decodes and validates requests, calls handle() and writes the answers. Time is the
 * sandbox clock (real time plus an offset the clock control moves). With a store every change is
 * written there before the answer, and a sandbox built from the stored rows carries on.
 */
export class CardSandbox {
  private state: CardState;
  private lastWrite: Promise<void> = Promise.resolve();
  private readonly calls = new Map<string, number>();
  private readonly requestIds = new Map<string, string[]>();
  /** Where the hosted payment pages and the bank pages are served (set once that listener is up). */
  readonly pages: PageAddresses = { pagesUrl: 'http://localhost' };
  private readonly operations = operationsWithPages(this.pages);

  constructor(
    private readonly options: {
      store?: CardStateStore;
      storedState?: readonly CardStateRow[];
      now?: () => Date;
    } = {},
  ) {
    this.state = CardState.restore(options.storedState ?? []);
  }

  /** The sandbox clock. */
  now(): Date {
    return new Date((this.options.now?.() ?? new Date()).getTime() + this.state.clockOffsetMs);
  }

  /** Moves the clock forward (never back). */
  advanceClock(seconds: number): Date {
    this.state.setClock(this.state.clockOffsetMs + Math.round(seconds * 1000));
    this.flush();
    return this.now();
  }

  keyOwner(key: string): KeyOwner {
    return this.state.keys.get(key);
  }

  /** A test merchant with fresh keys and the seeded branches; `3dsecure` takes cards only through 3-D Secure. */
  provisionMerchant(
    name = 'Sandbox merchant',
    type: MerchantType = 'standard',
  ): {
    merchantId: string;
    secretKey: string;
    publicKey: string;
  } {
    const created = this.now().toISOString();
    const book = this.state.addMerchant({
      id: newId('mer'),
      name,
      secretKey: keyOf('sk'),
      publicKey: keyOf('pk'),
      created,
      ...(type === '3dsecure' ? { type } : {}),
    });
    for (const branch of SEEDED_BRANCHES)
      this.state.put(book, 'branch', {
        token: newId('brc'),
        merchantId: book.merchant.id,
        seq: this.state.nextSeq(),
        created,
        ...branch,
      });
    this.flush();
    return {
      merchantId: book.merchant.id,
      secretKey: book.merchant.secretKey,
      publicKey: book.merchant.publicKey,
    };
  }

  /** Answers one operation for a merchant; a refusal comes back as a CardError. */
  handle(merchantId: string, request: CardRequest, requestId?: string): CardAnswer | CardError {
    this.calls.set(request.operationId, (this.calls.get(request.operationId) ?? 0) + 1);
    if (requestId !== undefined) {
      const ids = this.requestIds.get(request.operationId) ?? [];
      if (ids.length >= 100_000) ids.splice(0, 50_000);
      ids.push(requestId);
      this.requestIds.set(request.operationId, ids);
    }
    const book = this.state.books.get(merchantId) as MerchantBook;
    const operation = this.operations[request.operationId];
    try {
      return operation({ state: this.state, book, now: this.now() }, request);
    } catch (error) {
      if (error instanceof CardError) return error;
      throw error;
    } finally {
      this.flush();
    }
  }

  /**
   * Runs a change made outside the API (a hosted page, the bank page, a control) as an operation runs:
   * on the merchant's book at the sandbox clock, stored before the caller answers (await persisted()).
   */
  act<T>(merchantId: string, change: (context: CardContext) => T): T | CardError {
    const book = this.state.books.get(merchantId) as MerchantBook;
    try {
      return change({ state: this.state, book, now: this.now() });
    } catch (error) {
      if (error instanceof CardError) return error;
      throw error;
    } finally {
      this.flush();
    }
  }

  /**
   * One of the card API's writes made in the merchant's dashboard (a control): as the API answers it,
   * never counted among the API's calls; undefined when there is no such write (reads are the API's).
   */
  dashboard(merchantId: string, request: CardRequest): CardAnswer | CardError | undefined {
    const operation = this.operations[request.operationId];
    if (!operation || /^(list|retrieve)/.test(request.operationId)) return undefined;
    return this.act(merchantId, (context) => operation(context, request));
  }

  /** A sandbox control's change on each merchant's book (or one's), stored as an operation's is. */
  forMerchants<T>(change: (context: CardContext) => T, merchantId?: string): T[] {
    try {
      return [...this.state.books.values()]
        .filter((book) => merchantId === undefined || book.merchant.id === merchantId)
        .map((book) => change({ state: this.state, book, now: this.now() }));
    } finally {
      this.flush();
    }
  }

  /** The merchant whose book holds a notification or an IRIS session (pages know only the id). */
  ownerOf(kind: 'notification' | 'iris' | 'wallet' | 'tds', id: string): MerchantBook | undefined {
    for (const book of this.state.books.values()) if (book.map(kind).has(id)) return book;
    return undefined;
  }

  /** Every merchant's id (a test aid: counting what the provider made). */
  merchantIds(): string[] {
    return [...this.state.books.keys()];
  }

  merchantBook(merchantId: string): MerchantBook | undefined {
    return this.state.books.get(merchantId);
  }

  /** Registers (or with null removes) the merchant's webhook of bank payments. */
  setWebhook(merchantId: string, url: string | null): boolean {
    const book = this.state.books.get(merchantId);
    if (!book) return false;
    if (url === null) delete book.merchant.webhookUrl;
    else book.merchant.webhookUrl = url;
    this.state.touchMerchant(book.merchant);
    this.flush();
    return true;
  }

  /** Chooses how the result of an IRIS session will reach the merchant. */
  planDelivery(sessionId: string, plan: IrisDeliveryPlan): boolean {
    const book = this.ownerOf('iris', sessionId);
    const session = book?.irisSessions.get(sessionId);
    if (!book || !session) return false;
    session.delivery = plan;
    this.state.put(book, 'iris', session);
    this.flush();
    return true;
  }

  /** Calls answered since start, by operationId (a test aid, not stored). */
  callCounts(): Record<string, number> {
    return Object.fromEntries(this.calls);
  }

  requestIdsOf(operationId: string): string[] {
    return [...(this.requestIds.get(operationId) ?? [])];
  }

  /**
   * Forgets every payment, refund, token, customer and mandate, and the clock's offset; merchants
   * keep their keys and branches, so that whoever holds their keys can carry on.
   */
  reset(): void {
    const merchants = [...this.state.books.values()];
    this.state = new CardState();
    const fresh: CardStateRow[] = [];
    for (const old of merchants) {
      const book = this.state.addMerchant(old.merchant);
      for (const branch of old.branches.values()) this.state.put(book, 'branch', branch);
      this.state.seq = Math.max(this.state.seq, ...[...old.branches.values()].map((b) => b.seq));
    }
    fresh.push(...this.state.takeChanged());
    this.write({ reset: true, upserts: fresh, deletes: [] });
  }

  /** Settles when every change so far is stored; rejects when the latest write failed. */
  persisted(): Promise<void> {
    return this.lastWrite;
  }

  private flush(): void {
    const upserts = this.state.takeChanged();
    if (upserts.length > 0) this.write({ upserts, deletes: [] });
  }

  private write(changes: StoredRows<CardStateKind>): void {
    const { store } = this.options;
    if (!store) return;
    this.lastWrite = this.lastWrite.catch(() => undefined).then(() => store.write(changes));
    this.lastWrite.catch(() => undefined);
  }
}
