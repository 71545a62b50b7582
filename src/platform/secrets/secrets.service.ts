import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PROBLEM_TYPES, ProblemException } from '../errors/problem.js';
import { loadSecretsCipher, type SecretsCipher } from './secrets-cipher.js';

/**
 * Seals and opens the secrets Portico keeps at rest (SECRETS_KEY, AES-256-GCM). Without a key (production
 * without the setting) whatever needs one answers 503 naming the variable; the rest of Portico runs.
 */
@Injectable()
export class SecretsService {
  private cipherCache?: SecretsCipher | null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** `context` names the owner and field (`tenant:field`): a value sealed for one does not open for another. */
  seal(plain: string, context: string): string {
    return this.cipher().seal(plain, context);
  }

  open(sealed: string, context: string): string {
    return this.cipher().open(sealed, context);
  }

  private cipher(): SecretsCipher {
    if (this.cipherCache === undefined) this.cipherCache = loadSecretsCipher(this.config) ?? null;
    if (!this.cipherCache)
      throw new ProblemException({
        status: 503,
        type: PROBLEM_TYPES.unavailable,
        title: 'Service Unavailable',
        detail: 'SECRETS_KEY is not set: secrets cannot be stored or used (see .env.example)',
      });
    return this.cipherCache;
  }
}
