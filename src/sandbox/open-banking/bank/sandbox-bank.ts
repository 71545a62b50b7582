import {
  getAccountDetails,
  getBalances,
  getTransactionDetails,
  getTransactions,
  listAccounts,
} from './account-reads.js';
import { createConsent, deleteConsent, getConsent, getConsentStatus } from './ais-consents.js';
import { BankState, type BankContext } from './bank-state.js';
import { StateJournal, type BankStateStore, type StateChanges } from './state-journal.js';
import { authorizationEndpoint, BRANDS } from './brands.js';
import {
  createCofConsent,
  deleteCofConsent,
  getCofConsent,
  getCofConsentStatus,
} from './cof-consents.js';
import { actOnConsent, revokeAsPsu } from './consent-operations.js';
import { BankError, tppError } from './errors.js';
import { confirmFunds } from './funds-confirmation.js';
import { actOnPayment, getPayment, getPaymentStatus, initiatePayment } from './payments.js';
import { handleSca } from './sca-flow.js';
import {
  type BankRequest,
  type BankResponse,
  type ProductRules,
  type SandboxBankControl,
  type SandboxBankOptions,
  type ScaRequest,
  type ScaResponse,
} from './types.js';

type Operation = (context: BankContext, request: BankRequest) => BankResponse;

function listBrands(context: BankContext): BankResponse {
  return {
    status: 200,
    body: {
      brands: BRANDS.map((brand) => ({
        brandName: brand.brandName,
        brandId: brand.brandId,
        authorizationEndpoint: authorizationEndpoint(context.scaBaseUrl, brand.brandId),
      })),
    },
  };
}

/** psd2.yaml operationId -> implementation. */
const OPERATIONS: Readonly<Record<string, Operation>> = {
  listBrands,
  createCofConsent,
  getCofConsent,
  deleteCofConsent,
  getCofConsentStatus,
  confirmFunds,
  initiatePayment,
  getPayment,
  getPaymentStatus,
  createConsent,
  getConsent,
  deleteConsent,
  getConsentStatus,
  listAccounts,
  getAccountDetails,
  getTransactions,
  getTransactionDetails,
  getBalances,
};

export const OPERATION_IDS: readonly string[] = Object.keys(OPERATIONS);

/**
 * The upstream provider's open-banking API as an in-memory bank, without HTTP: the HTTP layer
 * parses and validates requests, calls handle()/handleSca() and writes the answers. With a store,
 * every change an operation makes is written there (in order, one write per operation), and a bank
 * built from the stored rows carries on where the previous one stopped.
 */
export class SandboxBank {
  readonly control: SandboxBankControl;
  private state: BankState;
  private journal: StateJournal;
  private readonly store?: BankStateStore;
  private lastWrite: Promise<void> = Promise.resolve();
  private readonly now: () => Date;
  private readonly scaBaseUrl: string;
  private readonly productRules: ProductRules;
  /** X-Request-IDs handled per operation, in memory only (a test aid, like the call counts). */
  private readonly requestIds = new Map<string, string[]>();

  constructor(options: SandboxBankOptions) {
    this.now = options.now ?? (() => new Date());
    this.scaBaseUrl = options.scaBaseUrl;
    this.productRules = options.productRules;
    this.store = options.store;
    const restored = StateJournal.restore(options.storedState ?? [], this.now());
    this.state = restored.state;
    this.journal = restored.journal;
    this.write(restored.changes);
    this.control = {
      revokeConsentAsPsu: (consentId) =>
        this.recorded(() => revokeAsPsu(this.context(), consentId)),
      actOnConsent: (consentId, change) =>
        this.recorded(() => actOnConsent(this.context(), consentId, change)),
      actOnPayment: (paymentId, change) =>
        this.recorded(() => actOnPayment(this.context(), paymentId, change)),
      calls: () => Object.fromEntries(this.state.calls),
      requestIds: (operationId) => [...(this.requestIds.get(operationId) ?? [])],
      reset: () => {
        this.state = new BankState(this.now());
        const fresh = StateJournal.fresh(this.state);
        this.journal = fresh.journal;
        this.write(fresh.changes);
      },
    };
  }

  handle(request: BankRequest): BankResponse {
    this.state.calls.set(request.operationId, (this.state.calls.get(request.operationId) ?? 0) + 1);
    this.noteRequestId(request.operationId, request.headers['x-request-id']);
    const operation = Object.hasOwn(OPERATIONS, request.operationId)
      ? OPERATIONS[request.operationId]
      : undefined;
    if (!operation)
      return tppError(405, 'SERVICE_INVALID', `Operation ${request.operationId} is not supported`);
    return this.recorded(() => {
      try {
        return operation(this.context(), request);
      } catch (error) {
        if (error instanceof BankError) return error.response;
        throw error;
      }
    });
  }

  private noteRequestId(operationId: string, requestId: string | undefined): void {
    if (requestId === undefined) return;
    const ids = this.requestIds.get(operationId) ?? [];
    // Bounded: the oldest half goes at once (amortised O(1) per call).
    if (ids.length >= 100_000) ids.splice(0, 50_000);
    ids.push(requestId);
    this.requestIds.set(operationId, ids);
  }

  handleSca(request: ScaRequest): ScaResponse {
    return this.recorded(() => handleSca(this.context(), request));
  }

  /**
   * Settles when every change made so far is in the store (at once without one); rejects when the
   * write of the latest operation failed, so that its caller does not report a change as made.
   */
  persisted(): Promise<void> {
    return this.lastWrite;
  }

  private recorded<T>(operation: () => T): T {
    try {
      return operation();
    } finally {
      if (this.store) this.write(this.journal.takeChanges());
      else this.journal.skip();
    }
  }

  private write(changes: StateChanges): void {
    const { store } = this;
    if (!store) return;
    if (!changes.reset && changes.upserts.length === 0 && changes.deletes.length === 0) return;
    this.lastWrite = this.lastWrite.catch(() => undefined).then(() => store.write(changes));
    // Whoever awaits persisted() sees a failure; nobody awaiting must not crash the process.
    this.lastWrite.catch(() => undefined);
  }

  private context(): BankContext {
    return {
      state: this.state,
      now: this.now,
      scaBaseUrl: this.scaBaseUrl,
      productRules: this.productRules,
    };
  }
}
