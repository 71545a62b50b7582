import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityManager, EntityTarget, Repository } from 'typeorm';
import { currentRequestId } from '#src/platform/logging/request-context.js';
import { StatusChange, type SubjectKind } from './status-change.entity.js';
import { StatusTransitionListeners } from './status-transition-listeners.js';

/** What a status change moves: a row of a table with a status (consents, payments). */
interface StatusSubject {
  id: string;
  tenantId: string;
  status: string;
}

/**
 * Appends to the status history of every provider resource, and (in the same transaction) tells the
 * transition's listeners (the webhook outbox records its event): the one place status changes are written.
 */
@Injectable()
export class StatusHistoryService {
  constructor(
    @InjectRepository(StatusChange) private readonly changes: Repository<StatusChange>,
    private readonly listeners: StatusTransitionListeners,
  ) {}

  async append(
    subject: { kind: SubjectKind; id: string; tenantId: string },
    fromStatus: string | null,
    toStatus: string,
    cause: string,
    manager?: EntityManager,
  ): Promise<void> {
    if (!manager)
      return this.changes.manager.transaction((own) =>
        this.append(subject, fromStatus, toStatus, cause, own),
      );
    await manager.getRepository(StatusChange).insert({
      subjectKind: subject.kind,
      subjectId: subject.id,
      tenantId: subject.tenantId,
      fromStatus,
      toStatus,
      cause,
      requestId: currentRequestId() ?? null,
    });
    if (fromStatus !== null)
      await this.listeners.notify(manager, { subject, fromStatus, toStatus, cause });
  }

  /**
   * Moves a consent or payment to a new status and records the change, in one transaction, as a
   * compare-and-set on the status the caller saw: when another request or replica changed it first,
   * nothing is written, `subject.status` becomes the stored one, and the answer is false.
   */
  async transition<T extends StatusSubject>(
    entity: EntityTarget<StatusSubject>,
    kind: SubjectKind,
    subject: T,
    to: string,
    cause: string,
  ): Promise<boolean> {
    const from = subject.status;
    if (from === to) return true;
    const current = await this.changes.manager.transaction(async (manager) => {
      const result = await manager
        .createQueryBuilder()
        .update(entity)
        .set({ status: to })
        .where('id = :id AND status = :from', { id: subject.id, from })
        .execute();
      if (!result.affected) {
        const row = await manager
          .createQueryBuilder()
          .select('s.status', 'status')
          .from(entity, 's')
          .where('s.id = :id', { id: subject.id })
          .getRawOne<{ status: string }>();
        return row?.status ?? from;
      }
      await this.append(
        { kind, id: subject.id, tenantId: subject.tenantId },
        from,
        to,
        cause,
        manager,
      );
      return to;
    });
    subject.status = current;
    return current === to;
  }

  of(kind: SubjectKind, id: string): Promise<StatusChange[]> {
    return this.changes.find({ where: { subjectKind: kind, subjectId: id }, order: { id: 'ASC' } });
  }
}
