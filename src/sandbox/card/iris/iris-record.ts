/** How the result of a bank payment reaches the merchant (a sandbox control sets it per session). */
export type IrisArrivalOrder = 'callback-webhook' | 'webhook-callback' | 'webhook-only';

export interface IrisDeliveryPlan {
  order: IrisArrivalOrder;
  /** How many times each message is sent (1 to 3). */
  copies: number;
  /** Order callback-webhook: how long the webhook waits for a release (default 1 s). */
  holdMs?: number;
}

/** A bank-payment (IRIS) session as the sandbox keeps it. */
export interface IrisSessionRecord {
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  expires: string;
  signature: string;
  uuid: string;
  md: string;
  amount: number;
  currency: 'EUR';
  country: string;
  callbackUrl: string;
  webhookUrl: string | null;
  status:
    | 'created'
    | 'captured'
    | 'initiated'
    | 'pending'
    | 'authorized'
    | 'expired'
    | 'failed'
    | 'cancelled';
  authorisationRequestId: string | null;
  initiated: string | null;
  /** The payment created from the source (the source is used up). */
  payment: string | null;
  delivery: IrisDeliveryPlan;
}
