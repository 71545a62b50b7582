import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Payment } from './payment.entity.js';

/**
 * The SQL of payments (table `payments`) outside the ledger: the reads of a tenant's payment and the
 * updates of what the bank answered. The row's creation and its status changes are the provider ledger's.
 */
@Injectable()
export class PaymentsRepository {
  constructor(@InjectRepository(Payment) private readonly rows: Repository<Payment>) {}

  /** A payment not yet stored (for the ledger to write). */
  build(fields: Partial<Payment>): Payment {
    return this.rows.create(fields);
  }

  /** The tenant's payment with this id, or null. */
  findOfTenant(tenantId: string, id: string): Promise<Payment | null> {
    return this.rows.findOne({ where: { id, tenantId } });
  }

  async update(id: string, fields: Partial<Payment>): Promise<void> {
    await this.rows.update({ id }, fields);
  }
}
