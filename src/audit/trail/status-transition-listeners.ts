import { Global, Injectable, Module } from '@nestjs/common';
import type { JsonObject } from '#src/platform/common/json.js';
import type { SubjectKind } from './status-change.entity.js';

/** A status change as its listeners see it. */
export interface StatusTransition {
  subject: { kind: SubjectKind; id: string; tenantId: string };
  fromStatus: string;
  toStatus: string;
  cause: string;
  /**
   * The row as it stands with the change (a provider resource's provider id, merchant reference and
   * stored answer), for listeners that name it by those.
   */
  resource: { token?: string | null; merchantRef?: string | null; data?: JsonObject | null };
}

/**
 * What a listener writes with a change, in the change's own statement (so both commit or neither):
 * CTEs that read `changed` (the row changed: `id`, `tenant_id`; no row when the compare-and-set found
 * another status, and then they write nothing), their parameters numbered from `first` on.
 */
export interface TransitionWrites {
  ctes: string[];
  params: unknown[];
}

export interface StatusTransitionListener {
  /** The rows this listener writes with the change (none: undefined). */
  writes(transition: StatusTransition, first: number): TransitionWrites | undefined;
  /** Told after a change was written (not when another request or replica changed the row first). */
  heard?(transition: StatusTransition): void;
}

/**
 * Who hears of each status change (the webhook outbox): their writes go into the change's own
 * statement. The trail knows no listener by name.
 */
@Injectable()
export class StatusTransitionListeners {
  private readonly listeners: StatusTransitionListener[] = [];

  subscribe(listener: StatusTransitionListener): void {
    this.listeners.push(listener);
  }

  /** Every listener's writes for a change, their parameters numbered from `first` on. */
  writes(transition: StatusTransition, first: number): TransitionWrites {
    const all: TransitionWrites = { ctes: [], params: [] };
    for (const listener of this.listeners) {
      const own = listener.writes(transition, first + all.params.length);
      if (!own) continue;
      all.ctes.push(...own.ctes);
      all.params.push(...own.params);
    }
    return all;
  }

  heard(transition: StatusTransition): void {
    for (const listener of this.listeners) listener.heard?.(transition);
  }
}

/** One registry for the whole application (the trail writes, the outbox listens). */
@Global()
@Module({ providers: [StatusTransitionListeners], exports: [StatusTransitionListeners] })
export class StatusTransitionsModule {}
