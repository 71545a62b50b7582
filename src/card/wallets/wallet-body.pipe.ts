import { Injectable, type PipeTransform } from '@nestjs/common';
import { ApiBody } from '@nestjs/swagger';
import { ProblemException } from '#src/platform/errors/problem.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import { CARD } from '#src/upstreams/card/card-schemas.js';
import type { CardForm } from '../common/card-body.pipe.js';

/** A tokenisation as the app asks for it: card.yaml's WebWalletPaymentData and where to come back. */
export interface WalletTokenizationRequest {
  returnUrl: string;
  /** The provider's fields (snake_case), checked by card.yaml. */
  form: CardForm<'WebWalletPaymentData'>;
}

const RETURN_URL = /^https?:\/\/[^\s]+$/;

/** The body's documentation: card.yaml's WebWalletPaymentData (camelCase) and `returnUrl`. */
export const ApiWalletTokenizationBody = () =>
  ApiBody({
    required: true,
    schema: {
      allOf: [
        CARD.ref('WebWalletPaymentData'),
        {
          type: 'object',
          required: ['returnUrl'],
          properties: {
            returnUrl: {
              type: 'string',
              format: 'uri',
              maxLength: 2048,
              pattern: '^https?://',
              description:
                "PAN-only: where Portico sends the payer's browser once the card token arrived, with `walletTokenization` and `status` (verified, rejected) in the query",
            },
          },
        },
      ],
      example: {
        amount: 1250,
        type: 'webwallet',
        token: 'eyJwcm90b2NvbFZlcnNpb24iOiJFQ3YyIiwi…',
        md: 'order-88',
        locale: 'en',
        payerEmail: 'payer@example.com',
        returnUrl: 'https://shop.example/checkout/done',
      },
    },
  });

/**
 * The facade body of a web-wallet tokenisation: `returnUrl` is Portico's, every other field is checked
 * against card.yaml's WebWalletPaymentData and mapped to the provider's form (problems name the
 * camelCase field). callback_url, sandbox and uuid are Portico's to set, so an app cannot send them.
 */
@Injectable()
export class WalletTokenizationBodyPipe implements PipeTransform {
  transform(body: unknown): WalletTokenizationRequest {
    const input = body === undefined || body === null ? {} : body;
    if (typeof input !== 'object' || Array.isArray(input))
      throw new ValidationFailedException([{ field: 'body', reason: 'must be a JSON object' }]);
    const { returnUrl, ...rest } = input as Record<string, unknown>;
    const errors: { field: string; reason: string }[] = [];
    if (typeof returnUrl !== 'string' || returnUrl.length > 2048 || !RETURN_URL.test(returnUrl))
      errors.push({ field: 'returnUrl', reason: 'returnUrl must be an absolute http(s) URL' });
    const { value, problems } = CARD.check('WebWalletPaymentData', rest);
    const byField = new Map<string, string[]>();
    for (const problem of problems) {
      const field = problem.path || 'body';
      byField.set(field, [...(byField.get(field) ?? []), problem.message]);
    }
    errors.push(...[...byField].map(([field, reasons]) => ({ field, reason: reasons.join('; ') })));
    if (errors.length === 0)
      errors.push(...payerRequired(value as CardForm<'WebWalletPaymentData'>));
    if (errors.length) throw new ValidationFailedException(errors);
    // Valid against card.yaml's WebWalletPaymentData, in its spelling.
    return { returnUrl: returnUrl as string, form: value as CardForm<'WebWalletPaymentData'> };
  }
}

const PAYER_REQUIRED =
  "a PAN-only wallet token needs the payer's payerEmail or payerPhone (the provider's 3-D Secure for it reaches the payer there)";

/**
 * The provider's constraint on a PAN-only wallet token (seed 002: payer_email, else payer_phone), checked
 * before the call when the token says its method: the sandbox's tokens and any other whose signedMessage
 * is not encrypted. A wallet provider's encrypted token hides it; the provider's refusal (80002 payer_email)
 * is then answered the same way (walletPayerRefusal).
 */
function payerRequired(form: CardForm<'WebWalletPaymentData'>) {
  if (form.payer_email || form.payer_phone || authMethodOf(form.token) !== 'PAN_ONLY') return [];
  return PAYER_FIELDS.map((field) => ({ field, reason: PAYER_REQUIRED }));
}

const PAYER_FIELDS = ['payerEmail', 'payerPhone'];

/**
 * The provider's refusal of a PAN-only token without the payer's email or phone (80002 payer_email),
 * which Portico could not see coming in an encrypted token, said as the facade's own check says it (the
 * provider's answer kept in `upstream`); undefined for any other error.
 */
export function walletPayerRefusal(error: unknown): ProblemException | undefined {
  const upstream = (error as ProblemException | undefined)?.init?.extensions?.upstream as
    { code?: string; text?: string } | undefined;
  if (upstream?.code !== '80002' || !upstream.text?.includes('payer_email')) return undefined;
  const { init } = new ValidationFailedException(
    PAYER_FIELDS.map((field) => ({ field, reason: PAYER_REQUIRED })),
  );
  return new ProblemException({ ...init, extensions: { ...init.extensions, upstream } });
}

/** `paymentMethodDetails.authMethod` of a wallet token whose message can be read, else undefined. */
function authMethodOf(token: unknown): unknown {
  if (typeof token !== 'string') return undefined;
  try {
    const outer = JSON.parse(Buffer.from(token, 'base64').toString('utf8')) as {
      signedMessage?: unknown;
    };
    if (typeof outer?.signedMessage !== 'string') return undefined;
    const message = JSON.parse(outer.signedMessage) as {
      paymentMethodDetails?: { authMethod?: unknown };
    };
    return message?.paymentMethodDetails?.authMethod;
  } catch {
    return undefined;
  }
}
