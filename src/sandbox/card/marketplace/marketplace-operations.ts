import { ok, type CardAnswer, type CardContext, type CardRequest } from '../card-context.js';
import { marketOf } from './ledger.js';
import { listPayouts, retrievePayout } from './payouts.js';
import { createReversal, listReversals, retrieveReversal } from './reversals.js';
import {
  createSeller,
  listSellers,
  retrieveSeller,
  retrieveSellerBalance,
  updateSeller,
} from './sellers.js';
import {
  createPaymentTransfer,
  createSellerTransfer,
  listTransfers,
  retrieveTransfer,
  updateTransfer,
} from './transfers.js';

function retrieveBalance(context: CardContext): CardAnswer {
  const market = marketOf(context);
  return ok({
    marketplace: { available_amount: market.available, current_amount: market.current },
  });
}

/** card.yaml's Marketplace operations by operationId. */
export const MARKETPLACE_OPERATIONS: Readonly<
  Record<string, (context: CardContext, request: CardRequest) => CardAnswer>
> = {
  createSeller,
  listSellers,
  retrieveSeller,
  updateSeller,
  retrieveSellerBalance,
  createPaymentTransfer,
  createSellerTransfer,
  listTransfers,
  retrieveTransfer,
  updateTransfer,
  createReversal,
  listReversals,
  retrieveReversal,
  listPayouts,
  retrievePayout,
  retrieveBalance,
};
