import { CardError, invalid } from '../card-context.js';

/** What the sandbox reads from a wallet token (the wallet provider's decrypted message). */
export interface WalletMessage {
  expiresAt: number;
  authMethod: 'CRYPTOGRAM_3DS' | 'PAN_ONLY';
  pan: string;
  expirationMonth: string;
  expirationYear: string;
}

const objectOf = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

function parse(text: string): Record<string, unknown> | undefined {
  try {
    return objectOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * The sandbox's wallet token (card.yaml, tag Wallets): base64 of `{protocolVersion, signature,
 * signedMessage}` whose signedMessage is the unencrypted JSON of the wallet's message. Unreadable:
 * 400 80002 token; past its messageExpiration on the sandbox clock: 400 20026.
 */
export function readWalletToken(token: string, now: Date): WalletMessage {
  const outer = parse(Buffer.from(token, 'base64').toString('utf8'));
  const message = typeof outer?.signedMessage === 'string' ? parse(outer.signedMessage) : undefined;
  const details = objectOf(message?.paymentMethodDetails);
  const expiresAt = Number(message?.messageExpiration);
  const authMethod = details?.authMethod;
  const pan = details?.pan;
  if (
    !details ||
    !Number.isFinite(expiresAt) ||
    (authMethod !== 'CRYPTOGRAM_3DS' && authMethod !== 'PAN_ONLY') ||
    typeof pan !== 'string' ||
    !/^\d{12,19}$/.test(pan)
  )
    throw invalid('token');
  if (expiresAt <= now.getTime()) throw new CardError(400, 20026);
  return {
    expiresAt,
    authMethod,
    pan,
    expirationMonth: String(details.expirationMonth ?? '').padStart(2, '0'),
    expirationYear: String(details.expirationYear ?? ''),
  };
}

/** A sandbox wallet token (what a test's checkout would get from the wallet provider). */
export function sandboxWalletToken(options: {
  authMethod: 'CRYPTOGRAM_3DS' | 'PAN_ONLY';
  pan?: string;
  expiresAt: number;
  expirationMonth?: number;
  expirationYear?: number;
}): string {
  const signedMessage = JSON.stringify({
    messageExpiration: String(options.expiresAt),
    paymentMethod: 'CARD',
    paymentMethodDetails: {
      authMethod: options.authMethod,
      pan: options.pan ?? '4111111111111111',
      expirationMonth: options.expirationMonth ?? 12,
      expirationYear: options.expirationYear ?? 2030,
      ...(options.authMethod === 'CRYPTOGRAM_3DS'
        ? { cryptogram: 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' }
        : {}),
    },
  });
  return Buffer.from(
    JSON.stringify({ protocolVersion: 'ECv2', signature: 'sandbox', signedMessage }),
    'utf8',
  ).toString('base64');
}
