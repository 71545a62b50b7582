/** Public surface of the sandbox bank for the HTTP layer and docs/sandbox.md. */
export { SandboxBank, OPERATION_IDS } from './sandbox-bank.js';
export { BRANDS, authorizationEndpoint, type Brand } from './brands.js';
export { TEST_USERS, type TestUserDescription } from './test-users.js';
export { toProductRules } from './product-rules.js';
export type { BankStateStore, StateChanges, StateKind, StateRow } from './state-journal.js';
export type {
  BankRequest,
  BankResponse,
  ProductRule,
  ProductRules,
  Psd2Role,
  SandboxBankControl,
  SandboxBankOptions,
  ScaRequest,
  ScaResponse,
} from './types.js';
