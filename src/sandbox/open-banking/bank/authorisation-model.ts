/** One PSU authorisation (the target of a scaRedirect): single-use, unguessable id. */
export interface Authorisation {
  authorisationId: string;
  brandId: string;
  target: { kind: 'consent'; consentId: string } | { kind: 'payment'; paymentId: string };
  /** Set once the PSU decided (or the TPP terminated the consent); its pages then say it is finished. */
  finished: boolean;
}

/** Server-side state between the login form and the decision form, keyed by a token in a hidden field. */
export interface ScaSession {
  token: string;
  authorisationId: string;
  username: string;
}
