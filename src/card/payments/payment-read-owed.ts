/**
 * When a payment owed a read is read (CardStore.oweRead, PaymentRefreshSync): after the deadline of the
 * call that changes it (a capture, a refund), whose answer may be late, lost, or not recorded.
 */
export const PAYMENT_READ_OWED_AFTER_MS = 30_000;
