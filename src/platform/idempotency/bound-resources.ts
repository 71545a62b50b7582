import { Injectable } from '@nestjs/common';
import type { ProblemException } from '../errors/problem.js';

/** What a resource an Idempotency-Key is bound to has become, read from its capability's store. */
export type BoundResourceState =
  /** Still being written, or in doubt with the provider. */
  | { state: 'in-doubt' }
  /** Settled: answered as the operation answers a success (the route's status unless `status`). */
  | { state: 'settled'; body: unknown; status?: number; headers?: Record<string, string> }
  /** Settled as not made by the provider: answered with the capability's problem. */
  | { state: 'failed'; problem: ProblemException };

/** A capability's reader of the resources it binds keys to (`/v1/card/payments/<id>`). */
export interface BoundResourceReader {
  /** The resources it reads: every `<prefix><id>` with no further `/`. */
  prefix: string;
  /** The tenant's resource by the id that follows the prefix; undefined when it has none. */
  read(tenantId: string, id: string): Promise<BoundResourceState | undefined>;
}

/**
 * Where capabilities register how the resources they bind Idempotency-Keys to stand now, so that a
 * repeat of a request whose first answer was "outcome unknown" (or that a crash cut off) answers the
 * settled resource, not the stale answer.
 */
@Injectable()
export class BoundResources {
  private readonly readers: BoundResourceReader[] = [];

  register(reader: BoundResourceReader): void {
    this.readers.push(reader);
  }

  /** The resource as it stands; undefined when no capability reads it (the stored answer stands). */
  async read(tenantId: string, resource: string): Promise<BoundResourceState | undefined> {
    for (const reader of this.readers) {
      if (!resource.startsWith(reader.prefix)) continue;
      const id = resource.slice(reader.prefix.length);
      if (id && !id.includes('/')) return reader.read(tenantId, decodeURIComponent(id));
    }
    return undefined;
  }
}
