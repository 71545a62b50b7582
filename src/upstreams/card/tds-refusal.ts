import { ProblemException } from '#src/platform/errors/problem.js';
import type { UpstreamAnswer } from '../http/upstream-caller.js';

export const CARD_FIELDS_NOT_ALLOWED = 'urn:portico:problem:card-fields-not-allowed';

/** The provider's refusals of card arguments sent by a 3-D Secure merchant's server (card.yaml). */
const TDS_CODES = new Set(['20011', '20013', '20016']);

/** The card arguments, provider spelling → facade spelling. */
const CARD_FIELDS: Record<string, string> = {
  card_number: 'cardNumber',
  expiration_month: 'expirationMonth',
  expiration_year: 'expirationYear',
  holder_name: 'holderName',
  cvv: 'cvv',
};

/**
 * A 3-D Secure merchant may not send cards from a server: the refusal says so in the facade's words,
 * naming the card fields sent and the page that tokenises in the payer's browser; undefined otherwise.
 */
export function tdsRefusal(
  answer: UpstreamAnswer<unknown>,
  form: Record<string, unknown> | undefined,
): ProblemException | undefined {
  const [first] = answer.messages;
  if (answer.status !== 400 || !first || !TDS_CODES.has(first.code)) return undefined;
  const sent = Object.keys(CARD_FIELDS).filter((field) => form?.[field] !== undefined);
  return new ProblemException({
    status: 400,
    type: CARD_FIELDS_NOT_ALLOWED,
    title: 'Card fields not allowed',
    detail:
      "The merchant is 3-D Secure: a card cannot be sent from a server. Tokenise it in the payer's browser with Portico's page (pageUrl of GET /v1/card/tokenization-config), which runs 3-D Secure, and pay with the ctn_ token it hands back.",
    errors: (sent.length > 0 ? sent : Object.keys(CARD_FIELDS)).map((field) => ({
      field: CARD_FIELDS[field],
      reason: `${CARD_FIELDS[field]} is not allowed for a 3-D Secure merchant: use the tokenisation page`,
    })),
    extensions: {
      tokenizationConfig: '/v1/card/tokenization-config',
      upstream: { status: answer.status, code: first.code, text: first.text },
    },
  });
}
