import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';

const RESOURCE_ID = '^[A-Za-z0-9._~-]{1,128}$';

export class AccountParams {
  @ApiProperty({
    description: "The account's resourceId, from GET /v1/accounts or the consent's accounts",
    pattern: RESOURCE_ID,
    maxLength: 128,
  })
  @Matches(new RegExp(RESOURCE_ID), {
    message: 'accountId must be a resourceId from GET /v1/accounts',
  })
  accountId: string;
}

export class TransactionParams extends AccountParams {
  @ApiProperty({
    description: 'A transactionId from the transaction list',
    pattern: RESOURCE_ID,
    maxLength: 128,
  })
  @Matches(new RegExp(RESOURCE_ID), {
    message: 'transactionId must be a transactionId from the transaction list',
  })
  transactionId: string;
}
