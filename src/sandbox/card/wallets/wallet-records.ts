import type { StoredCard } from '../card-state.js';

/** A web-wallet tokenisation as the sandbox keeps it (its uuid is unique within the merchant). */
export interface WalletRecord {
  /** `wlt_…`: the PAN-only page's id. */
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  uuid: string;
  amount: number;
  md: string;
  callbackUrl: string;
  authMethod: 'CRYPTOGRAM_3DS' | 'PAN_ONLY';
  /** The wallet's card, until the card token is made (PAN-only waits for the payer). */
  card: StoredCard;
  status: 'pending' | 'completed';
  /** The card token made (`ctn_…`). */
  cardToken: string | null;
}

/** A device-wallet domain of a merchant; a deleted one keeps its reason (registering again makes a new one). */
export interface DomainRecord {
  /** `dwd_…` (rows of every merchant share one key space). */
  token: string;
  merchantId: string;
  seq: number;
  created: string;
  domainName: string;
  status: 'registered' | 'deleted';
  deleted?: string;
  reason?: string;
}
