import { PSD2 } from '#src/upstreams/open-banking/psd2-schemas.js';

/** Path parameters the bank defines: their rules are the contract's (ResourceIdentifier). */
export class AccountParams {
  @PSD2.field('ResourceIdentifier', {
    description: "The account's resourceId, from GET /v1/accounts or the consent's accounts",
  })
  accountId: string;
}

export class TransactionParams extends AccountParams {
  @PSD2.field('ResourceIdentifier', {
    description: 'A transactionId from the transaction list',
    example: 'trx-0001-2024-03-01',
  })
  transactionId: string;
}
