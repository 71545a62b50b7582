/**
 * Redaction applied to every log line: API keys, bearer tokens and card numbers are masked
 * wherever they appear, and values under sensitive field names are dropped.
 */
const SENSITIVE_KEY =
  /^(authorization|cookie|set-cookie|password|passphrase|secret|secret_?key|public_?key|pos_?key|api_?key|key|token|cvv|cvc|cvv2|cvc2|card_?number|pan|number|private_?key)$/i;
const API_KEY = /\bptk_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{8,}/g;
/** The card provider's merchant keys (`sk_…`, `pk_…`): the last four characters stay, as the API shows them. */
const MERCHANT_KEY = /\b(sk|pk)_[A-Za-z0-9_.-]{0,246}([A-Za-z0-9]{4})\b/g;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi;
/** The SCA callback's single-use state, in a path or a URL: whoever holds it completes that authorisation. */
const SCA_STATE_PATH = /(\/sca\/callback\/)[^/?#\s"]+/g;
const STATE_QUERY = /([?&](?:state|token|code)=)[^&#\s"]+/gi;
/** 13 to 19 digits, optionally grouped by single spaces or dashes. */
const DIGIT_RUN = /\b\d(?:[ -]?\d){12,18}\b/g;

export const REDACTED = '[REDACTED]';

/** Whether a text may hold any of the above (case-blind: a superset), so most lines take one pass. */
const MAY_HOLD_SECRET = new RegExp(
  [API_KEY, MERCHANT_KEY, SCA_STATE_PATH, STATE_QUERY, BEARER, DIGIT_RUN]
    .map((pattern) => `(?:${pattern.source})`)
    .join('|'),
  'i',
);

function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** The shortest text any of the patterns above matches (`sk_1234`, `Basic x`): shorter ones are clean. */
const SHORTEST_SECRET = 7;

export function scrubText(text: string): string {
  if (text.length < SHORTEST_SECRET || !MAY_HOLD_SECRET.test(text)) return text;
  return text
    .replace(API_KEY, REDACTED)
    .replace(MERCHANT_KEY, (_m, prefix: string, last: string) => `${prefix}_${REDACTED}${last}`)
    .replace(SCA_STATE_PATH, `$1${REDACTED}`)
    .replace(STATE_QUERY, `$1${REDACTED}`)
    .replace(BEARER, (_m, scheme: string) => `${scheme} ${REDACTED}`)
    .replace(DIGIT_RUN, (run) => {
      const digits = run.replace(/[ -]/g, '');
      return luhnValid(digits) ? `[PAN ****${digits.slice(-4)}]` : run;
    });
}

export function scrubValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  // Errors are left to the logger's err serializer, which scrubs them once their fields are enumerable.
  if (value === null || typeof value !== 'object' || value instanceof Error || depth > 8)
    return value;
  if (Array.isArray(value)) return value.map((item) => scrubValue(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    out[key] =
      sensitiveKey(key) && item !== undefined && item !== null
        ? REDACTED
        : scrubValue(item, depth + 1);
  }
  return out;
}

/** Field names seen, and whether each is sensitive: the same few names are on most lines. */
const knownKeys = new Map<string, boolean>();
const KNOWN_KEYS_LIMIT = 1000;

function sensitiveKey(key: string): boolean {
  let sensitive = knownKeys.get(key);
  if (sensitive === undefined) {
    sensitive = SENSITIVE_KEY.test(key);
    if (knownKeys.size < KNOWN_KEYS_LIMIT) knownKeys.set(key, sensitive);
  }
  return sensitive;
}

/** The path of a request as logged: no query string, and no SCA state. */
export function loggedPath(url: string): string {
  return scrubText(url.split('?')[0]);
}
