/** What every operation that reaches the bank may answer besides its own outcomes. */
export const UPSTREAM_PROBLEMS = {
  502: 'The bank failed or answered something unusable (`upstream` carries its status and code)',
  504: 'The bank did not answer in time',
};
