/**
 * Set by @Idempotent({ readBack: true }): the answer's body is not stored (it holds a secret that is
 * kept sealed elsewhere); a repeat answers the bound resource as its capability reads it then.
 */
export const READ_BACK_KEY = 'portico:idempotent-read-back';
