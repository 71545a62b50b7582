import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '../errors/problem.js';
import { loadSecretsKeyRing, sealedKeyId, type SecretsKeyRing } from './secrets-cipher.js';

/**
 * Seals and opens the secrets Portico keeps at rest (AES-256-GCM): SECRETS_KEY seals, it and the keys
 * of SECRETS_KEYS open. Without a key (production without the setting) whatever needs one answers 503
 * naming the variable; the rest of Portico runs.
 */
@Injectable()
export class SecretsService {
  private ringCache?: SecretsKeyRing | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `context` names the owner and field (`tenant:field`): a value sealed for one does not open for another. */
  seal(plain: string, context: string): string {
    return this.ring().seal(plain, context);
  }

  open(sealed: string, context: string): string {
    return this.ring().open(sealed, context);
  }

  /** Whether a key is configured at all (else nothing can be sealed or opened). */
  configured(): boolean {
    return this.loadedRing() !== null;
  }

  /** The id of the key that seals, and of every key that opens (the current one first). */
  keyIds(): { current: string; opening: string[] } {
    const ring = this.ring();
    return { current: ring.current.keyId, opening: ring.keyIds };
  }

  /** Whether a stored value is sealed with the current key (a plain value is not). */
  isCurrent(stored: string): boolean {
    return sealedKeyId(stored) === this.ring().current.keyId;
  }

  private loadedRing(): SecretsKeyRing | null {
    if (this.ringCache === undefined) this.ringCache = loadSecretsKeyRing(this.config) ?? null;
    return this.ringCache;
  }

  private ring(): SecretsKeyRing {
    const ring = this.loadedRing();
    if (!ring)
      throw new ProblemException({
        status: 503,
        type: PROBLEM_TYPES.unavailable,
        title: 'Service Unavailable',
        detail: 'SECRETS_KEY is not set: secrets cannot be stored or used (see .env.example)',
      });
    return ring;
  }
}
