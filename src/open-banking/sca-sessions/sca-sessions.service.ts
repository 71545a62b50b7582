import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import type { SubjectKind } from '#src/audit/trail/status-change.entity.js';
import { ScaSessionRepository, type ScaSessionSubject } from './sca-session.repository.js';

const SCA_WINDOW_MS = 60 * 60 * 1000;

const hashOf = (state: string) => createHash('sha256').update(state).digest('hex');

/** Unguessable single-use states that bind the bank's redirect back to one consent or payment. */
@Injectable()
export class ScaSessionsService {
  constructor(
    private readonly sessions: ScaSessionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Opens a session and returns the callback address to give the bank as TPP-Redirect-URI and TPP-Nok-Redirect-URI. */
  async open(subject: { kind: SubjectKind; id: string; tenantId: string }): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    await this.sessions.open(hashOf(state), subject, new Date(Date.now() + SCA_WINDOW_MS));
    return `${this.config.http.publicBaseUrl}/v1/sca/callback/${state}`;
  }

  /** Takes the session for a returning browser, once: a second use, an unknown or an expired state gives undefined. */
  consume(state: string): Promise<ScaSessionSubject | undefined> {
    return this.sessions.consume(hashOf(state));
  }
}
