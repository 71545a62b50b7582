import { Module } from '@nestjs/common';
import { SealedValuesRepository } from './sealed-values.repository.js';
import { SecretsResealService } from './secrets-reseal.service.js';
import { SecretsService } from './secrets.service.js';

/** Encryption at rest of the secrets Portico keeps (merchant keys, webhook signing secrets), and its re-seal. */
@Module({
  providers: [SecretsService, SealedValuesRepository, SecretsResealService],
  exports: [SecretsService, SecretsResealService],
})
export class SecretsModule {}
