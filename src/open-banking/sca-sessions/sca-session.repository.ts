import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import type { SubjectKind } from '#src/audit/trail/status-change.entity.js';
import { ScaSession } from './sca-session.entity.js';

/** What a consumed session names: the consent or payment the bank's redirect comes back for. */
export type ScaSessionSubject = Pick<
  ScaSession,
  'stateHash' | 'subjectKind' | 'subjectId' | 'tenantId'
>;

/** The SQL of SCA sessions (table `sca_sessions`): opened once, taken once. */
@Injectable()
export class ScaSessionRepository {
  constructor(@InjectRepository(ScaSession) private readonly sessions: Repository<ScaSession>) {}

  async open(
    stateHash: string,
    subject: { kind: SubjectKind; id: string; tenantId: string },
    expiresAt: Date,
  ): Promise<void> {
    await this.sessions.insert({
      stateHash,
      subjectKind: subject.kind,
      subjectId: subject.id,
      tenantId: subject.tenantId,
      expiresAt,
      usedAt: null,
    });
  }

  /** Marks the session used, when it is unused and unexpired, in one statement: two takers never both get it. */
  async consume(stateHash: string): Promise<ScaSessionSubject | undefined> {
    const result = await this.sessions
      .createQueryBuilder()
      .update()
      .set({ usedAt: () => 'now()' })
      .where('state_hash = :hash AND used_at IS NULL AND expires_at > now()', { hash: stateHash })
      .returning('*')
      .execute();
    const [row] = result.raw as {
      state_hash: string;
      subject_kind: SubjectKind;
      subject_id: string;
      tenant_id: string;
    }[];
    if (!row) return undefined;
    return {
      stateHash: row.state_hash,
      subjectKind: row.subject_kind,
      subjectId: row.subject_id,
      tenantId: row.tenant_id,
    };
  }
}
