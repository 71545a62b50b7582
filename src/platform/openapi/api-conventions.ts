/** The security scheme every API-key route declares in the facade's spec. */
export const API_KEY_SCHEME = 'apiKey';

/** The rate-limit headers (IETF draft RateLimit fields) every limited answer carries. */
export const RATE_LIMIT_HEADERS = {
  limit: 'RateLimit-Limit',
  remaining: 'RateLimit-Remaining',
  reset: 'RateLimit-Reset',
} as const;
