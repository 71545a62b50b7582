import { createHash } from 'node:crypto';

/** What Portico sent of a notification that the provider's object answers unchanged. */
export interface NotificationFields {
  amount: number;
  description: string;
  payee_name: string;
  payee_email: string;
  payee_phone: string;
}

/**
 * The digest of a notification's fields, kept with its row before the provider is called: the
 * provider takes no reference of ours on a notification, so a lost creation is found among the
 * provider's notifications by these fields (the e-mail compared without case).
 */
export function notificationDigest(fields: NotificationFields): string {
  const text = JSON.stringify([
    fields.amount,
    fields.description.trim(),
    fields.payee_name.trim(),
    fields.payee_email.trim().toLowerCase(),
    fields.payee_phone.trim(),
  ]);
  return createHash('sha256').update(`notification:${text}`, 'utf8').digest('base64url');
}
