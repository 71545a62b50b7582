import { type BankResponse } from './types.js';

/** Berlin Group message codes this bank produces (a subset of psd2.yaml `MessageCode`). */
export type BankErrorCode =
  | 'FORMAT_ERROR'
  | 'PARAMETER_NOT_CONSISTENT'
  | 'PERIOD_INVALID'
  | 'RESOURCE_UNKNOWN'
  | 'SERVICE_INVALID'
  | 'CONSENT_INVALID'
  | 'CONSENT_EXPIRED'
  | 'CONSENT_UNKNOWN'
  | 'PRODUCT_UNKNOWN'
  | 'PRODUCT_INVALID'
  | 'PARAMETER_NOT_SUPPORTED'
  | 'STATUS_INVALID'
  | 'ACCESS_EXCEEDED';

export interface TppMessage {
  category: 'ERROR';
  code: BankErrorCode;
  text: string;
  path?: string;
}

export function tppMessage(code: BankErrorCode, text: string, path?: string): TppMessage {
  return path === undefined
    ? { category: 'ERROR', code, text }
    : { category: 'ERROR', code, text, path };
}

/** A `TppMessageError` answer with one or more messages. */
export function tppErrors(
  status: number,
  messages: readonly TppMessage[],
  headers?: Record<string, string>,
): BankResponse {
  return { status, ...(headers ? { headers } : {}), body: { tppMessages: [...messages] } };
}

export function tppError(
  status: number,
  code: BankErrorCode,
  text: string,
  path?: string,
): BankResponse {
  return tppErrors(status, [tppMessage(code, text, path)]);
}

/**
 * Lets a check deep in a handler answer with an error without every caller threading
 * unions through; caught once in SandboxBank.handle.
 */
export class BankError extends Error {
  constructor(readonly response: BankResponse) {
    super('bank error answer');
  }
}

export function fail(status: number, code: BankErrorCode, text: string, path?: string): never {
  throw new BankError(tppError(status, code, text, path));
}
