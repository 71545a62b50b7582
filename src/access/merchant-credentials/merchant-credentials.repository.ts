import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { CardCredentials } from './card-credentials.entity.js';

/** A tenant's sealed keys and their hints, as stored (never opened here). */
export type SealedCredentials = Omit<CardCredentials, 'updatedAt'>;

/** The SQL of merchant credentials (table `card_credentials`): one row per tenant. */
@Injectable()
export class MerchantCredentialsRepository {
  constructor(
    @InjectRepository(CardCredentials) private readonly rows: Repository<CardCredentials>,
  ) {}

  /** Writes a tenant's keys; with `keepExisting`, keys it already has stay (one statement). */
  async store(row: SealedCredentials, keepExisting: boolean): Promise<void> {
    if (keepExisting)
      await this.rows.createQueryBuilder().insert().values(row).orIgnore().execute();
    else await this.rows.upsert(row, ['tenantId']);
  }

  find(tenantId: string): Promise<CardCredentials | null> {
    return this.rows.findOneBy({ tenantId });
  }

  exists(tenantId: string): Promise<boolean> {
    return this.rows.existsBy({ tenantId });
  }
}
