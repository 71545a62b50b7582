/** A notification (hosted payment link) as the sandbox keeps it. */
export interface NotificationRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  status: 'Pending' | 'Paid' | 'Expired' | 'Canceled';
  payeeName: string;
  payeeEmail: string;
  payeePhone: string;
  amount: number;
  description: string;
  /** ISO instant, or null when the link does not expire. */
  expires: string | null;
  locale: 'el' | 'en';
  skipNotify: boolean;
  maxInstallments: number;
  createCustomer: boolean;
  split: boolean;
  metadata: Record<string, string>;
  /** The payment made on the hosted page. */
  payment: string | null;
}

/** An e-mail the sandbox "sent" (kept in the merchant's outbox, never sent anywhere). */
export interface MailRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  to: string;
  subject: string;
  locale: 'el' | 'en';
  notification: string;
  link: string;
}
