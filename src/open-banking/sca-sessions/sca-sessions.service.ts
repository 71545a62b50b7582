import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, randomBytes } from 'node:crypto';
import type { Repository } from 'typeorm';
import type { AppConfig } from '../../platform/config/app-config.js';
import { APP_CONFIG } from '../../platform/config/config.module.js';
import type { SubjectKind } from '../../audit/trail/status-change.entity.js';
import { ScaSession } from './sca-session.entity.js';

const SCA_WINDOW_MS = 60 * 60 * 1000;

const hashOf = (state: string) => createHash('sha256').update(state).digest('hex');

/** Unguessable single-use states that bind the bank's redirect back to one consent or payment. */
@Injectable()
export class ScaSessionsService {
  constructor(
    @InjectRepository(ScaSession) private readonly sessions: Repository<ScaSession>,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Opens a session and returns the callback address to give the bank as TPP-Redirect-URI and TPP-Nok-Redirect-URI. */
  async open(subject: { kind: SubjectKind; id: string; tenantId: string }): Promise<string> {
    const state = randomBytes(32).toString('base64url');
    await this.sessions.insert({
      stateHash: hashOf(state),
      subjectKind: subject.kind,
      subjectId: subject.id,
      tenantId: subject.tenantId,
      expiresAt: new Date(Date.now() + SCA_WINDOW_MS),
      usedAt: null,
    });
    return `${this.config.http.publicBaseUrl}/v1/sca/callback/${state}`;
  }

  /** Takes the session for a returning browser, once: a second use, an unknown or an expired state gives undefined. */
  async consume(state: string): Promise<ScaSession | undefined> {
    const result = await this.sessions
      .createQueryBuilder()
      .update()
      .set({ usedAt: () => 'now()' })
      .where('state_hash = :hash AND used_at IS NULL AND expires_at > now()', {
        hash: hashOf(state),
      })
      .returning('*')
      .execute();
    const row = (result.raw as Record<string, unknown>[])[0];
    if (!row) return undefined;
    return {
      stateHash: row.state_hash,
      subjectKind: row.subject_kind,
      subjectId: row.subject_id,
      tenantId: row.tenant_id,
    } as ScaSession;
  }
}
