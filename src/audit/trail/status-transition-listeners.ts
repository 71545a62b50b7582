import { Global, Injectable, Module } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { SubjectKind } from './status-change.entity.js';

/** A status change as its listeners see it, inside the change's own transaction. */
export interface StatusTransition {
  subject: { kind: SubjectKind; id: string; tenantId: string };
  fromStatus: string;
  toStatus: string;
  cause: string;
}

export type StatusTransitionListener = (
  manager: EntityManager,
  transition: StatusTransition,
) => Promise<void>;

/**
 * Who hears of each status change (the webhook outbox), called inside the change's transaction so that
 * what a listener writes commits or rolls back with the change. The trail knows no listener by name.
 */
@Injectable()
export class StatusTransitionListeners {
  private readonly listeners: StatusTransitionListener[] = [];

  subscribe(listener: StatusTransitionListener): void {
    this.listeners.push(listener);
  }

  async notify(manager: EntityManager, transition: StatusTransition): Promise<void> {
    for (const listener of this.listeners) await listener(manager, transition);
  }
}

/** One registry for the whole application (the trail writes, the outbox listens). */
@Global()
@Module({ providers: [StatusTransitionListeners], exports: [StatusTransitionListeners] })
export class StatusTransitionsModule {}
