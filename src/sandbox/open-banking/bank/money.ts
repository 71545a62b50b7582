/**
 * Amounts are kept as integer thousandths (bigint) because psd2.yaml allows 14 integer and
 * 3 fraction digits, more than a double holds exactly.
 */
export type Milli = bigint;

const AMOUNT = /^(-?)([0-9]{1,14})(?:\.([0-9]{1,3}))?$/;

export function parseAmount(text: string): Milli {
  const match = AMOUNT.exec(text);
  if (!match) throw new Error(`not an AmountValue: ${text}`);
  const [, sign, whole, fraction = ''] = match;
  const magnitude = BigInt(whole) * 1000n + BigInt(fraction.padEnd(3, '0'));
  return sign === '-' ? -magnitude : magnitude;
}

/** Two fraction digits, or three when the value needs them (a payment may carry three). */
export function formatAmount(value: Milli): string {
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  const whole = magnitude / 1000n;
  const fraction = (magnitude % 1000n).toString().padStart(3, '0');
  const shown = fraction.endsWith('0') ? fraction.slice(0, 2) : fraction;
  return `${negative ? '-' : ''}${whole.toString()}.${shown}`;
}

/** Whole currency units and cents, as written in the seed data. */
export function units(whole: number, cents = 0): Milli {
  return BigInt(whole) * 1000n + BigInt(cents) * 10n;
}
