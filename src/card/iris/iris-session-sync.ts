import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ProviderSyncParts } from '#src/platform/provider-sync/provider-sync.js';
import { CardIrisService } from './card-iris.service.js';

/** An authorized session waits this long for its payment to be settled (the resolver's own horizon). */
const IRIS_SYNC_LIFETIME_MS = 86_400_000;

/**
 * IRIS sessions the app is not told about by any message: an open session whose lifetime passed (it is
 * `expired`, with its event, without a read), and an approved one whose payment was settled after its
 * answer was lost (it is `captured`). The provider has no read of a session (card.yaml): its callback
 * and webhook bring the bank's result, the lifetime and the payment row the rest.
 */
@Injectable()
export class IrisSessionSync implements OnModuleInit {
  constructor(
    private readonly parts: ProviderSyncParts,
    private readonly sessions: CardIrisService,
  ) {}

  onModuleInit(): void {
    this.parts.register({
      name: 'iris-sessions',
      pending: {
        table: 'provider_resources',
        kinds: ['iris_session'],
        statuses: ['created', 'initiated', 'authorized'],
        lifetimeMs: IRIS_SYNC_LIFETIME_MS,
      },
      refresh: (id) => this.sessions.refresh(id),
    });
  }
}
