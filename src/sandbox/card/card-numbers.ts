/** What the sandbox makes of a card number: everything but the number itself, which is never kept. */
export interface CardFacts {
  type: string;
  bin: string;
  lastFour: string;
  supportsInstallments: boolean;
  /** How charges from this card end (seeds/README.md test cards). */
  charge: 'ok' | 'declined' | 'error-500' | 'error-502';
  /** How refunds of payments from this card end. */
  refund: 'ok' | 'error-500' | 'error-502';
}

/** The sandbox's own decline card (4000000000000002 succeeds: the provider's clients pre-authorise it). */
const DECLINE_CARD = '4000000000009995';

/** The only card that supports installments, and how many at most. */
export const INSTALLMENTS_CARD = '4908440000000003';
export const MAX_INSTALLMENTS = 36;

const CHARGE: Record<string, CardFacts['charge']> = {
  [DECLINE_CARD]: 'declined',
  '4888137257116730': 'error-500',
  '4853451426120387': 'error-502',
};
const REFUND: Record<string, CardFacts['refund']> = {
  '4916915111701144': 'error-502',
  '5206140271967502': 'error-500',
};

export function passesLuhn(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The scheme label by BIN range (card.yaml Card.type). */
export function schemeOf(number: string): string {
  const two = Number(number.slice(0, 2));
  const four = Number(number.slice(0, 4));
  if (number.startsWith('4')) return 'Visa';
  if ((two >= 51 && two <= 55) || (four >= 2221 && four <= 2720)) return 'MasterCard';
  if (two === 34 || two === 37) return 'American Express';
  if (number.startsWith('6011') || number.startsWith('65')) return 'Discover';
  if (
    two === 36 ||
    two === 38 ||
    (Number(number.slice(0, 3)) >= 300 && Number(number.slice(0, 3)) <= 305)
  )
    return 'Diners Club';
  if (four >= 3528 && four <= 3589) return 'JCB';
  if (two === 50 || (two >= 56 && two <= 69)) return 'Maestro';
  return 'Unknown';
}

export function factsOf(number: string): CardFacts {
  return {
    type: schemeOf(number),
    bin: number.slice(0, 6),
    lastFour: number.slice(-4),
    supportsInstallments: number === INSTALLMENTS_CARD,
    charge: CHARGE[number] ?? 'ok',
    refund: REFUND[number] ?? 'ok',
  };
}
