import { signIrisJson } from '#src/shared/iris/iris-hash.js';
import type { IrisSessionRecord } from './iris-record.js';

/** How a session ended at the bank. */
export type IrisOutcome = 'approved' | 'refused' | 'cancelled';

/** The failure each outcome other than approval reports (card.yaml IrisCallback). */
const FAILURES: Record<
  Exclude<IrisOutcome, 'approved'>,
  { status: number; code: number; message: string }
> = {
  refused: { status: 402, code: 40004, message: 'Payment was declined by issuer bank.' },
  cancelled: { status: 400, code: 41002, message: 'The payer cancelled the bank payment.' },
};

export interface IrisMessages {
  /** The fields the browser posts to callback_url. */
  callback: Record<string, string>;
  /** The JSON body of the webhook. */
  webhook: Record<string, unknown>;
}

/**
 * The callback and webhook of a session's result, each carrying `hash` =
 * base64(hex(HMAC-SHA256(secret_key, json)) + "|" + json) over the json card.yaml names.
 */
export function irisMessages(
  secretKey: string,
  session: IrisSessionRecord,
  outcome: IrisOutcome,
): IrisMessages {
  if (outcome === 'approved') {
    const hash = signIrisJson(
      secretKey,
      JSON.stringify({
        callback_url: session.callbackUrl,
        token: session.token,
        md: session.md,
        type: 'iris',
      }),
    );
    return {
      callback: { token: session.token, md: session.md, type: 'iris', hash },
      webhook: { token: session.token, md: session.md, hash },
    };
  }
  const failure = FAILURES[outcome];
  const hash = signIrisJson(
    secretKey,
    JSON.stringify({
      callback_url: session.callbackUrl,
      md: session.md,
      error_status: failure.status,
      error_code: failure.code,
      error_message: failure.message,
      type: 'iris',
    }),
  );
  return {
    callback: {
      error_status: String(failure.status),
      error_code: String(failure.code),
      error_message: failure.message,
      hash,
      md: session.md,
    },
    webhook: {
      md: session.md,
      hash,
      error_status: failure.status,
      error_code: failure.code,
      error_message: failure.message,
    },
  };
}
