import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, Repository } from 'typeorm';
import { currentRequestId } from '../../logging/request-context.js';
import { StatusChange, type SubjectKind } from './status-change.entity.js';

/** Appends to the status history of consents and payments. */
@Injectable()
export class StatusHistoryService {
  constructor(@InjectRepository(StatusChange) private readonly changes: Repository<StatusChange>) {}

  async append(
    subject: { kind: SubjectKind; id: string; tenantId: string },
    fromStatus: string | null,
    toStatus: string,
    cause: string,
    manager?: EntityManager,
  ): Promise<void> {
    const repository = manager ? manager.getRepository(StatusChange) : this.changes;
    await repository.insert({ subjectKind: subject.kind, subjectId: subject.id, tenantId: subject.tenantId, fromStatus, toStatus, cause, requestId: currentRequestId() ?? null });
  }

  of(kind: SubjectKind, id: string): Promise<StatusChange[]> {
    return this.changes.find({ where: { subjectKind: kind, subjectId: id }, order: { id: 'ASC' } });
  }
}
