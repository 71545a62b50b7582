import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '#src/platform/secrets/secrets.module.js';
import { SecretsResealService } from '#src/platform/secrets/secrets-reseal.service.js';
import { CardCredentials } from './card-credentials.entity.js';
import { CardCredentialsController } from './card-credentials.controller.js';
import { CARD_SEALED_KEYS, CardCredentialsService } from './card-credentials.service.js';
import { MerchantCredentialsRepository } from './merchant-credentials.repository.js';

/** Each tenant's merchant keys at the card provider (API, CLI, and the card client's Basic auth). */
@Module({
  imports: [TypeOrmModule.forFeature([CardCredentials]), SecretsModule],
  controllers: [CardCredentialsController],
  providers: [MerchantCredentialsRepository, CardCredentialsService],
  exports: [CardCredentialsService],
})
export class CardCredentialsModule {
  constructor(reseal: SecretsResealService) {
    reseal.register(CARD_SEALED_KEYS);
  }
}
