import { randomBytes } from 'node:crypto';
import { newId } from '../card/card-context.js';
import { dateTime, type PosMerchant, type Terminal, type TerminalOutcome } from './pos-state.js';

/** A terminal a test asks for: each field a fixture (see docs/sandbox.md, "The POS terminal interface"). */
export interface TerminalFixture {
  status?: 'enabled' | 'disabled';
  connected?: boolean;
  busy?: boolean;
  /** A virtual cash register whose data the terminal validates. */
  cashRegisterValidation?: boolean;
  /** Linked to an ERP system, with this many transactions it has not reported. */
  erpPendingTransactions?: number;
  /** What the terminal does with a payment when no payer control comes first (default approve at once). */
  outcome?: TerminalOutcome;
  /** How long a payment request is held for the terminal (default the seed's 180 s). */
  holdMs?: number;
  /** Never acknowledges a payment (it stays INITIATING): the hold runs out with 10004, not CANCELLED. */
  unresponsive?: boolean;
}

const DIGITS = '0123456789';
const randomDigits = (count: number) =>
  [...randomBytes(count)].map((byte) => DIGITS[byte % 10]).join('');

/** A new terminal of a merchant from a fixture; `seq` orders terminals by onboarding. */
export function newTerminal(
  merchant: PosMerchant,
  fixture: TerminalFixture,
  seq: number,
  now: number,
  defaultHoldMs: number,
): Terminal {
  const validation = fixture.cashRegisterValidation === true;
  return {
    token: newId('trm'),
    merchantId: merchant.merchantId,
    seq,
    // 8 characters starting EP, as cash-register data must name it.
    tid: `EP${randomDigits(6)}`,
    mid: merchant.mid,
    company: merchant.company,
    status: fixture.status ?? 'enabled',
    dateOnboarded: dateTime(now),
    connected: fixture.connected ?? true,
    busy: fixture.busy ?? false,
    unresponsive: fixture.unresponsive ?? false,
    cashRegister: validation
      ? { id: `vcr_${randomDigits(10)}`, secret: randomBytes(24).toString('base64url'), validation }
      : undefined,
    erpLinked: fixture.erpPendingTransactions !== undefined,
    outcome: fixture.outcome ?? { action: 'approve', afterMs: 0 },
    holdMs: fixture.holdMs ?? defaultHoldMs,
    batch: 1,
  };
}

/** Checks a fixture from a control request; answers the problem, or undefined. */
export function fixtureProblem(input: Record<string, unknown>): string | undefined {
  const known = [
    'count',
    'status',
    'connected',
    'busy',
    'cashRegisterValidation',
    'erpPendingTransactions',
    'outcome',
    'holdMs',
    'unresponsive',
  ];
  const extra = Object.keys(input).find((key) => !known.includes(key));
  if (extra) return `${extra} is not a terminal fixture (${known.join(', ')})`;
  if (input.status !== undefined && input.status !== 'enabled' && input.status !== 'disabled')
    return 'status must be enabled or disabled';
  for (const flag of ['connected', 'busy', 'cashRegisterValidation', 'unresponsive'])
    if (input[flag] !== undefined && typeof input[flag] !== 'boolean')
      return `${flag} must be true or false`;
  const whole = (name: string, max: number) => {
    const value = input[name];
    return (
      value === undefined ||
      (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max)
    );
  };
  if (!whole('count', 200)) return 'count must be a whole number from 0 to 200';
  if (!whole('erpPendingTransactions', 500))
    return 'erpPendingTransactions must be a whole number from 0 to 500';
  if (!whole('holdMs', 600_000)) return 'holdMs must be a whole number from 0 to 600000';
  if (input.outcome !== undefined) {
    const outcome = input.outcome as { action?: unknown; afterMs?: unknown };
    if (
      typeof outcome !== 'object' ||
      !['approve', 'decline', 'cancel', 'never'].includes(outcome.action as string) ||
      !(
        outcome.afterMs === undefined ||
        (typeof outcome.afterMs === 'number' && outcome.afterMs >= 0 && outcome.afterMs <= 600_000)
      )
    )
      return 'outcome must be { action: approve|decline|cancel|never, afterMs?: 0..600000 }';
  }
  return undefined;
}
