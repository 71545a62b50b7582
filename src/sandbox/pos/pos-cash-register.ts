import { createHmac, timingSafeEqual } from 'node:crypto';
import type { PosContract } from '#src/shared/contracts/pos-contract.js';
import { PosError } from './pos-errors.js';
import type { Terminal } from './pos-state.js';

const SIGNED_FIELDS = [
  'uid',
  'net_value',
  'vat_value',
  'total_value',
  'payment_amount',
  'tid',
  'time_stamp',
] as const;

/** base64(HMAC-SHA256(secret, uid|net_value|vat_value|total_value|payment_amount|tid|time_stamp)), as pos.yaml decides. */
export function cashRegisterSignature(secret: string, metadata: Record<string, string>): string {
  const text = SIGNED_FIELDS.map((field) => metadata[field] ?? '').join('|');
  return createHmac('sha256', secret).update(text).digest('base64');
}

const cents = (decimal: string) => Math.round(Number(decimal) * 100);
const euros = (amount: number) => (amount / 100).toFixed(2);

/**
 * The virtual cash register's check on a terminal that validates it: every field present and well formed
 * (10001 naming the fields), then the values matching the request and the signature matching (10007).
 */
export function checkCashRegister(
  contract: PosContract,
  terminal: Terminal,
  metadata: Record<string, string> | undefined,
  paid: number,
): void {
  const register = terminal.cashRegister;
  if (!register?.validation) return;
  if (!metadata)
    throw new PosError(10001, [
      { name: 'metadata', reason: 'is required: the terminal validates cash-register data' },
    ]);
  const problems = contract.checkBody('PosCashRegisterMetadata', metadata);
  if (problems.length)
    throw new PosError(
      10001,
      problems.map((problem) => ({
        name: `metadata.${problem.path}`,
        reason: problem.message,
      })),
    );
  const expected = cashRegisterSignature(register.secret, metadata);
  const given = Buffer.from(metadata.signature);
  const matches =
    metadata.tid === terminal.tid &&
    metadata.payment_amount === euros(paid) &&
    cents(metadata.net_value) + cents(metadata.vat_value) === cents(metadata.total_value) &&
    given.length === Buffer.byteLength(expected) &&
    timingSafeEqual(given, Buffer.from(expected));
  if (!matches) throw new PosError(10007);
}
