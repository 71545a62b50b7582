import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { components } from '#src/generated/psd2.js';
import { PROBLEM_TYPES, ProblemException } from '#src/platform/errors/problem.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import type { LedgerTable } from '#src/provider-ledger/ledger-table.js';
import { ProviderLedger } from '#src/provider-ledger/provider-ledger.service.js';
import {
  OpenBankingClient,
  scaRedirectHeaders,
  type OpenBankingSend,
} from '#src/upstreams/open-banking/open-banking.client.js';
import { requestIdHeader } from '#src/upstreams/http/upstream-transport.js';
import { createdAtBank, refusedCause } from '../bank-creation.js';
import { ScaSessionsService } from '../sca-sessions/sca-sessions.service.js';
import { newScaSubject, scaApproachOf } from '../sca-sessions/sca-subject.columns.js';
import {
  Consent,
  type ConsentAccess,
  type ConsentAccount,
  type ConsentKind,
  FINAL_CONSENT_STATUSES,
  type ConsentStatus,
} from './consent.entity.js';
import { ConsentsRepository } from './consents.repository.js';
import type { CreateCofConsentRequest, CreateConsentRequest } from './dto/consent.dto.js';
import { isUuid } from '#src/shared/uuid.js';

const FINAL = FINAL_CONSENT_STATUSES;
const todayUtc = () => new Date().toISOString().slice(0, 10);

/** Where the app reads a consent. */
export const consentPath = (consent: Pick<Consent, 'id' | 'kind'>) =>
  consent.kind === 'ais'
    ? `/v1/consents/${consent.id}`
    : `/v1/funds-confirmation-consents/${consent.id}`;

export const consentProblem = (status: number, code: string, detail: string) =>
  new ProblemException({
    status,
    type: `urn:portico:problem:consent:${code.toLowerCase().replace(/_/g, '-')}`,
    title: code,
    detail,
    extensions: { code },
  });

export const RENEWAL_REQUIRED_TYPE = 'urn:portico:problem:consent:renewal-required';

/** The bank no longer knows the consent: what the app is told, with what it must do. */
export function renewalProblem(consent: Pick<Consent, 'id' | 'kind'>): ProblemException {
  const create =
    consent.kind === 'ais' ? 'POST /v1/consents' : 'POST /v1/funds-confirmation-consents';
  return new ProblemException({
    status: 401,
    type: RENEWAL_REQUIRED_TYPE,
    title: 'Consent must be renewed',
    detail: `The bank no longer knows consent ${consent.id}, so it cannot be used any more. Renew it: create a new consent (${create}) and have the user authorise it at the bank.`,
    extensions: { code: 'CONSENT_INVALID', consentId: consent.id },
  });
}

/** The bank's answer says it does not know the consent (Berlin Group CONSENT_UNKNOWN). */
export const bankDoesNotKnow = (answer: { status: number; messages: { code: string }[] }) =>
  answer.status === 403 && answer.messages[0]?.code === 'CONSENT_UNKNOWN';

/** Consents in the provider-resource ledger: a table of their own, whose rich columns auditors read. */
export const CONSENTS: LedgerTable<Consent> = {
  entity: Consent,
  name: 'consents',
  subjectKind: () => 'consent',
  accessSubject: (consent) => ({ consentId: consent.id }),
};

/** What the bank answers a consent's creation with. */
type ConsentCreated = components['schemas']['ConsentResponse'];

/**
 * The consent store: one row per consent in the provider-resource ledger, written before the bank is
 * called and completed after, with every status change appended to the history.
 */
@Injectable()
export class ConsentsService {
  constructor(
    private readonly consents: ConsentsRepository,
    private readonly ledger: ProviderLedger,
    private readonly sca: ScaSessionsService,
    private readonly bank: OpenBankingClient,
  ) {}

  async createAccountConsent(tenantId: string, request: CreateConsentRequest): Promise<Consent> {
    if (request.validUntil < todayUtc())
      throw new ValidationFailedException([
        { field: 'validUntil', reason: 'validUntil must not be in the past' },
      ]);
    // A renewal names an account-information consent of the same app (404 otherwise, as for any other).
    if (request.renewsConsentId) await this.find(tenantId, request.renewsConsentId, 'ais');
    const consent = await this.begin(tenantId, 'ais', request, request.access, {
      recurringIndicator: request.recurringIndicator,
      validUntil: request.validUntil,
      frequencyPerDay: request.frequencyPerDay ?? null,
      renewsConsentId: request.renewsConsentId ?? null,
    });
    const callback = await this.sca.open({ kind: 'consent', id: consent.id, tenantId });
    return this.create(consent, 'createConsent', (api) =>
      api.POST('/{brandId}/bg/v1/consents', {
        params: {
          path: { brandId: request.brandId },
          header: scaRedirectHeaders(callback),
        },
        body: {
          access: request.access,
          recurringIndicator: request.recurringIndicator,
          validUntil: request.validUntil,
          ...(request.frequencyPerDay ? { frequencyPerDay: request.frequencyPerDay } : {}),
        },
      }),
    );
  }

  async createFundsConsent(tenantId: string, request: CreateCofConsentRequest): Promise<Consent> {
    const consent = await this.begin(tenantId, 'cof', request, { account: request.account }, {});
    const callback = await this.sca.open({ kind: 'consent', id: consent.id, tenantId });
    return this.create(consent, 'createCofConsent', (api) =>
      api.POST('/{brandId}/bg/v2/consents/confirmation-of-funds', {
        params: {
          path: { brandId: request.brandId },
          header: scaRedirectHeaders(callback),
        },
        body: { account: request.account },
      }),
    );
  }

  /** The tenant's consent, or 404: another tenant's consent does not exist for this caller. */
  async find(tenantId: string, consentId: string, kind?: ConsentKind): Promise<Consent> {
    const consent = isUuid(consentId)
      ? await this.consents.findOfTenant(tenantId, consentId)
      : null;
    if (!consent || (kind && consent.kind !== kind)) throw ConsentsService.unknown(consentId);
    return consent;
  }

  /** The 404 of a consent that is not the tenant's (or not of the kind asked for). */
  static unknown(consentId: string): ProblemException {
    return new ProblemException({
      status: 404,
      type: PROBLEM_TYPES.notFound,
      title: 'Not Found',
      detail: `No consent ${consentId}`,
      extensions: { code: 'CONSENT_UNKNOWN' },
    });
  }

  /** The consent with its status brought up to date: expiry by date, and the bank's word for open consents. */
  async refresh(consent: Consent): Promise<Consent> {
    await this.expireIfDue(consent);
    if (FINAL.includes(consent.status) || !consent.upstreamConsentId) return consent;
    const status = await this.upstreamStatus(consent);
    if (status === 'forgottenByBank') await this.forgottenByBank(consent);
    else if (status && status !== consent.status)
      await this.transition(consent, status, 'upstream-status');
    return consent;
  }

  async delete(consent: Consent, cause = 'deleted-by-app'): Promise<void> {
    if (consent.status === 'terminatedByTpp' || consent.status === 'forgottenByBank') return;
    if (FINAL.includes(consent.status))
      throw consentProblem(
        409,
        'STATUS_INVALID',
        `The consent is ${consent.status} and cannot be deleted`,
      );
    if (consent.upstreamConsentId) {
      const path = { brandId: consent.brandId, consentId: consent.upstreamConsentId };
      const header = requestIdHeader();
      const answer =
        consent.kind === 'ais'
          ? await this.bank.call('deleteConsent', consent.brandId, (api) =>
              api.DELETE('/{brandId}/bg/v1/consents/{consentId}', {
                params: { path, header },
              }),
            )
          : await this.bank.call('deleteCofConsent', consent.brandId, (api) =>
              api.DELETE('/{brandId}/bg/v2/consents/confirmation-of-funds/{consentId}', {
                params: { path, header },
              }),
            );
      // Nothing is left to terminate at a bank that no longer knows the consent.
      if (bankDoesNotKnow(answer)) return void (await this.forgottenByBank(consent));
      if (answer.status >= 400 && answer.status !== 409)
        throw this.bank.refusal('deleteConsent', answer);
      if (answer.status === 409) return void (await this.refresh(consent));
    }
    await this.transition(consent, 'terminatedByTpp', cause);
  }

  /**
   * After the user's browser comes back from the bank: read the consent there, store what it granted
   * and, for account information, the accounts it covers (read with the user present).
   */
  async completeSca(consent: Consent, psuIpAddress: string): Promise<Consent> {
    consent.lastScaAt = new Date();
    if (!consent.upstreamConsentId) return consent;
    const path = { brandId: consent.brandId, consentId: consent.upstreamConsentId };
    if (consent.kind === 'ais') {
      const answer = await this.bank.call('getConsent', consent.brandId, (api) =>
        api.GET('/{brandId}/bg/v1/consents/{consentId}', {
          params: { path, header: requestIdHeader() },
        }),
      );
      if (answer.data) {
        consent.grantedAccess = answer.data.access;
        consent.validUntil = answer.data.validUntil;
        consent.recurringIndicator = answer.data.recurringIndicator;
        if (answer.data.consentStatus === 'valid')
          consent.accounts = await this.readAccounts(consent, psuIpAddress);
        await this.patch(consent.id, {
          grantedAccess: consent.grantedAccess,
          validUntil: consent.validUntil,
          recurringIndicator: consent.recurringIndicator,
          accounts: consent.accounts,
          lastScaAt: consent.lastScaAt,
        });
        if (answer.data.consentStatus !== consent.status)
          await this.transition(consent, answer.data.consentStatus, 'sca-callback');
        if (consent.status === 'valid' && consent.renewsConsentId)
          await this.retireRenewed(consent);
        return consent;
      }
    } else {
      const answer = await this.bank.call('getCofConsent', consent.brandId, (api) =>
        api.GET('/{brandId}/bg/v2/consents/confirmation-of-funds/{consentId}', {
          params: { path, header: requestIdHeader() },
        }),
      );
      if (answer.data) {
        consent.grantedAccess = { account: answer.data.account };
        await this.patch(consent.id, {
          grantedAccess: consent.grantedAccess,
          lastScaAt: consent.lastScaAt,
        });
        if (answer.data.consentStatus !== consent.status)
          await this.transition(consent, answer.data.consentStatus, 'sca-callback');
        return consent;
      }
    }
    await this.patch(consent.id, { lastScaAt: consent.lastScaAt });
    return consent;
  }

  /**
   * The renewal is valid: the consent it renews is terminated at the bank (cause `renewed-by:<id>`).
   * A failure there leaves the old consent as it was (the app may delete it); the renewal stands.
   */
  private async retireRenewed(renewal: Consent): Promise<void> {
    const old = await this.consents.findOfTenant(renewal.tenantId, renewal.renewsConsentId!);
    if (!old || FINAL.includes(old.status)) return;
    await this.delete(old, `renewed-by:${renewal.id}`).catch(() => undefined);
  }

  /** Records a valid consent whose last day has passed as expired; returns whether it did. */
  async expireIfDue(consent: Consent): Promise<boolean> {
    if (
      consent.status !== 'valid' ||
      consent.validUntil === null ||
      consent.validUntil >= todayUtc()
    )
      return false;
    await this.transition(consent, 'expired', 'valid-until-passed');
    return true;
  }

  /** The bank said it does not know the consent: recorded as `forgottenByBank`, final. */
  async forgottenByBank(consent: Consent): Promise<void> {
    if (consent.status !== 'forgottenByBank')
      await this.transition(consent, 'forgottenByBank', 'forgotten-by-bank');
  }

  transition(consent: Consent, to: ConsentStatus, cause: string): Promise<boolean> {
    return this.ledger.transition(CONSENTS, consent, to, cause);
  }

  /**
   * Settles a consent in doubt with the bank (the ledger leases it): one whose bank id is known takes
   * the bank's status; one whose creation may have reached the bank but whose id never arrived stays
   * `unknown` (Berlin Group offers no other lookup) until its lifetime at the bank has passed.
   */
  async settleInDoubt(consent: Consent, giveUpAfterMs: number, scaWindowMs: number): Promise<void> {
    if (consent.upstreamConsentId) {
      const status = await this.upstreamStatus(consent).catch(() => undefined);
      if (status) await this.transition(consent, status, 'resolver');
      return;
    }
    const age = Date.now() - consent.createdAt.getTime();
    if (age > giveUpAfterMs) await this.transition(consent, 'failed', 'resolver:lifetime-passed');
    // The lost answer held the SCA link and Portico sends no PSU-ID (no decoupled SCA): nobody can
    // authorise it at the bank, and without the bank's id nothing can be read under it.
    else if (age > scaWindowMs)
      await this.transition(consent, 'failed', 'resolver:sca-window-passed');
    else if (consent.status === 'creating')
      await this.transition(consent, 'unknown', 'resolver:answer-never-recorded');
  }

  private async patch(id: string, fields: Partial<Consent>): Promise<void> {
    await this.consents.update(id, fields);
  }

  /** Stores a consent about to be asked of the bank (`creating`), with its first history entry. */
  private async begin(
    tenantId: string,
    kind: ConsentKind,
    request: CreateConsentRequest | CreateCofConsentRequest,
    requestedAccess: ConsentAccess,
    fields: Partial<Consent>,
  ): Promise<Consent> {
    const consent = this.consents.build({
      id: randomUUID(),
      tenantId,
      kind,
      brandId: request.brandId,
      upstreamConsentId: null,
      requestedAccess,
      grantedAccess: null,
      accounts: [],
      recurringIndicator: null,
      validUntil: null,
      frequencyPerDay: null,
      status: 'creating',
      ...newScaSubject(request),
      ...fields,
    });
    await this.ledger.begin(CONSENTS, consent);
    return this.consents.get(consent.id);
  }

  /**
   * The ledger's create sequence: the Idempotency-Key bound to the consent, the bank asked; refused
   * (or certainly not sent) the consent fails, in doubt it is `unknown` until the resolver settles it.
   */
  private async create(
    consent: Consent,
    operation: 'createConsent' | 'createCofConsent',
    send: OpenBankingSend<ConsentCreated>,
  ): Promise<Consent> {
    await this.ledger.create(CONSENTS, consent, {
      resource: consentPath(consent),
      names: (row) => ({ consentId: row.id, consentStatus: row.status }),
      send: () => createdAtBank(this.bank, operation, consent.brandId, send),
      settle: (created) => this.completeCreation(consent, created.data, created.headers),
      refusedCause,
    });
    return consent;
  }

  private async completeCreation(
    consent: Consent,
    data: ConsentCreated,
    headers: Record<string, string>,
  ): Promise<void> {
    consent.upstreamConsentId = data.consentId;
    consent.scaRedirect = data._links.scaRedirect?.href ?? null;
    consent.scaApproach = scaApproachOf(headers);
    await this.patch(consent.id, {
      upstreamConsentId: consent.upstreamConsentId,
      scaRedirect: consent.scaRedirect,
      scaApproach: consent.scaApproach,
    });
    await this.transition(consent, data.consentStatus, 'upstream-created');
  }

  private async upstreamStatus(consent: Consent): Promise<ConsentStatus | undefined> {
    const path = { brandId: consent.brandId, consentId: consent.upstreamConsentId as string };
    const header = requestIdHeader();
    const answer =
      consent.kind === 'ais'
        ? await this.bank.call('getConsentStatus', consent.brandId, (api) =>
            api.GET('/{brandId}/bg/v1/consents/{consentId}/status', {
              params: { path, header },
            }),
          )
        : await this.bank.call('getCofConsentStatus', consent.brandId, (api) =>
            api.GET('/{brandId}/bg/v2/consents/confirmation-of-funds/{consentId}/status', {
              params: { path, header },
            }),
          );
    if (bankDoesNotKnow(answer)) return 'forgottenByBank';
    return answer.data?.consentStatus as ConsentStatus | undefined;
  }

  private async readAccounts(consent: Consent, psuIpAddress: string): Promise<ConsentAccount[]> {
    const answer = await this.bank.call('listAccounts', consent.brandId, (api) =>
      api.GET('/{brandId}/bg/v1/accounts', {
        params: {
          path: { brandId: consent.brandId },
          header: {
            ...requestIdHeader(),
            'Consent-ID': consent.upstreamConsentId as string,
            'PSU-IP-Address': psuIpAddress,
          },
        },
      }),
    );
    return (answer.data?.accounts ?? []).map((account) => ({
      resourceId: account.resourceId,
      iban: account.iban,
      currency: account.currency,
    }));
  }
}
