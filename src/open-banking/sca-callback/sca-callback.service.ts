import { Injectable } from '@nestjs/common';
import { ProblemException } from '#src/platform/errors/problem.js';
import { ConsentsService } from '../consents/consents.service.js';
import { PaymentsService, REFUSED_PAYMENT_STATUSES } from '../payments/payments.service.js';
import { ScaSessionsService } from '../sca-sessions/sca-sessions.service.js';

const STATE = /^[A-Za-z0-9_-]{43}$/;

function withQuery(uri: string, query: Record<string, string>): string {
  const url = new URL(uri);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}

/** The user's return from the bank: takes the single-use state, records the outcome, tells where to go. */
@Injectable()
export class ScaCallbackService {
  constructor(
    private readonly sessions: ScaSessionsService,
    private readonly consents: ConsentsService,
    private readonly payments: PaymentsService,
  ) {}

  /** The app's address to send the browser to, with the outcome in its query string. */
  async complete(state: string, psuIpAddress: string): Promise<string> {
    const session = STATE.test(state) ? await this.sessions.consume(state) : undefined;
    if (!session) {
      throw new ProblemException({
        status: 410,
        type: 'urn:portico:problem:sca-state-gone',
        title: 'Gone',
        detail:
          'This return address is unknown, expired or was already used. Start again from the app.',
      });
    }
    if (session.subjectKind === 'consent') {
      const consent = await this.consents.completeSca(
        await this.consents.find(session.tenantId, session.subjectId),
        psuIpAddress,
      );
      const target =
        consent.status === 'valid'
          ? consent.redirectUri
          : (consent.nokRedirectUri ?? consent.redirectUri);
      return withQuery(target, { consentId: consent.id, status: consent.status });
    }
    const payment = await this.payments.completeSca(
      await this.payments.find(session.tenantId, session.subjectId),
    );
    const target = REFUSED_PAYMENT_STATUSES.includes(payment.status)
      ? (payment.nokRedirectUri ?? payment.redirectUri)
      : payment.redirectUri;
    return withQuery(target, { paymentId: payment.id, status: payment.status });
  }
}
