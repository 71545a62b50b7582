import { Module } from '@nestjs/common';
import { SecretsService } from './secrets.service.js';

/** Encryption at rest of the secrets Portico keeps (merchant keys, webhook signing secrets). */
@Module({ providers: [SecretsService], exports: [SecretsService] })
export class SecretsModule {}
