import { type BankContext } from './bank-state.js';
import { type AisConsent } from './consent-model.js';
import { secondsUntilNextUtcDay, utcDay } from './dates.js';
import { BankError, tppErrors, tppMessage } from './errors.js';
import { type BankRequest } from './types.js';

/**
 * Reads without PSU-IP-Address happen without the PSU, so PSD2 caps them per consent and UTC day
 * (all account reads of the consent together). Call this last, when the read is otherwise
 * certain to succeed: only successful reads count.
 */
export function countUnattendedRead(
  context: BankContext,
  request: BankRequest,
  consent: AisConsent,
): void {
  if (request.headers['psu-ip-address']) return;
  const now = context.now();
  const key = `${consent.consentId}|${utcDay(now)}`;
  const used = context.state.unattendedReads.get(key) ?? 0;
  if (used >= consent.frequencyPerDay) {
    throw new BankError(
      tppErrors(
        429,
        [
          tppMessage(
            'ACCESS_EXCEEDED',
            `Unattended access frequency for today exhausted (${consent.frequencyPerDay} per day)`,
          ),
        ],
        {
          'Retry-After': String(secondsUntilNextUtcDay(now)),
        },
      ),
    );
  }
  context.state.unattendedReads.set(key, used + 1);
}
