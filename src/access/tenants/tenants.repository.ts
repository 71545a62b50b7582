import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryFailedError, type Repository } from 'typeorm';
import { Tenant } from './tenant.entity.js';
import { isUuid } from '#src/shared/uuid.js';

const UNIQUE_VIOLATION = '23505';

/** Whether a write failed because a unique key (a tenant's slug) is taken. */
export const isUniqueViolation = (error: unknown): boolean =>
  error instanceof QueryFailedError &&
  (error.driverError as { code?: string }).code === UNIQUE_VIOLATION;

/** The SQL of tenants (table `tenants`). */
@Injectable()
export class TenantsRepository {
  constructor(@InjectRepository(Tenant) private readonly rows: Repository<Tenant>) {}

  /** A new tenant; fails with a unique violation (isUniqueViolation) when the slug is taken. */
  insert(slug: string, name: string): Promise<Tenant> {
    return this.rows.save(this.rows.create({ slug, name }));
  }

  /** Writes the tenant unless its slug exists already (one statement). */
  async insertUnlessExists(slug: string, name: string): Promise<void> {
    await this.rows.createQueryBuilder().insert().values({ slug, name }).orIgnore().execute();
  }

  /** Every tenant, oldest first. */
  list(): Promise<Tenant[]> {
    return this.rows.find({ order: { createdAt: 'ASC', slug: 'ASC' } });
  }

  /** The tenant with this id (a list of at most one). */
  listById(id: string): Promise<Tenant[]> {
    return this.rows.find({ where: { id } });
  }

  findByIdOrSlug(idOrSlug: string): Promise<Tenant | null> {
    return this.rows.findOne({ where: isUuid(idOrSlug) ? { id: idOrSlug } : { slug: idOrSlug } });
  }
}
