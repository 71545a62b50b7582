import { Module } from '@nestjs/common';
import { CardCredentialsModule } from './credentials/card-credentials.module.js';

/** The card API facade: one module per capability, on the card upstream and each tenant's merchant keys. */
@Module({
  imports: [CardCredentialsModule],
})
export class CardModule {}
