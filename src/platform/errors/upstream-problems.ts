export const UPSTREAM_PROBLEM_TYPES = {
  refused: 'urn:portico:problem:upstream-refused',
  badGateway: 'urn:portico:problem:upstream-failed',
  timeout: 'urn:portico:problem:upstream-timeout',
  unavailable: 'urn:portico:problem:upstream-unavailable',
} as const;

/** What every operation that reaches the provider may answer besides its own outcomes. */
export const UPSTREAM_PROBLEMS = {
  502: 'The provider failed or answered something unusable, or something that breaks its contract (`upstream` carries its status and code, or the failure)',
  503: 'The provider has been failing and the call was not sent (circuit open; see Retry-After)',
  504: 'The provider did not answer within the deadline',
};
