import {
  getAccountDetails,
  getBalances,
  getTransactionDetails,
  getTransactions,
  listAccounts,
} from './account-reads.js';
import { createConsent, deleteConsent, getConsent, getConsentStatus } from './ais-consents.js';
import { BankState, type BankContext } from './bank-state.js';
import { authorizationEndpoint, BRANDS } from './brands.js';
import {
  createCofConsent,
  deleteCofConsent,
  getCofConsent,
  getCofConsentStatus,
} from './cof-consents.js';
import { revokeAsPsu } from './consent-operations.js';
import { BankError, tppError } from './errors.js';
import { confirmFunds } from './funds-confirmation.js';
import { getPayment, getPaymentStatus, initiatePayment } from './payments.js';
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
 * parses and validates requests, calls handle()/handleSca() and writes the answers.
 */
export class SandboxBank {
  readonly control: SandboxBankControl;
  private state: BankState;
  private readonly now: () => Date;
  private readonly scaBaseUrl: string;
  private readonly productRules: ProductRules;

  constructor(options: SandboxBankOptions) {
    this.now = options.now ?? (() => new Date());
    this.scaBaseUrl = options.scaBaseUrl;
    this.productRules = options.productRules;
    this.state = new BankState(this.now());
    this.control = {
      revokeConsentAsPsu: (consentId) => revokeAsPsu(this.context(), consentId),
      calls: () => Object.fromEntries(this.state.calls),
      reset: () => {
        this.state = new BankState(this.now());
      },
    };
  }

  handle(request: BankRequest): BankResponse {
    this.state.calls.set(request.operationId, (this.state.calls.get(request.operationId) ?? 0) + 1);
    const operation = Object.hasOwn(OPERATIONS, request.operationId)
      ? OPERATIONS[request.operationId]
      : undefined;
    if (!operation)
      return tppError(405, 'SERVICE_INVALID', `Operation ${request.operationId} is not supported`);
    try {
      return operation(this.context(), request);
    } catch (error) {
      if (error instanceof BankError) return error.response;
      throw error;
    }
  }

  handleSca(request: ScaRequest): ScaResponse {
    return handleSca(this.context(), request);
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
