import { randomUUID } from 'node:crypto';
import { type Authorisation, type ScaSession } from './authorisation-model.js';
import { type BankContext } from './bank-state.js';
import { authorizationEndpoint, findBrand, trimTrailingSlash, type Brand } from './brands.js';
import { isBankOffered } from './consent-model.js';
import { executePayment, rejectPayment } from './payment-execution.js';
import { paymentFacts } from './payment-model.js';
import { loginPage, messagePage, redirectPage, reviewPage } from './sca-pages.js';
import { purposeOf, reviewPlan, type ScaTarget } from './sca-review.js';
import { accountsAtBrand, findUser, SANDBOX_USERS } from './test-users.js';
import { type ScaRequest, type ScaResponse } from './types.js';

/**
 * The PSU's side of an authorisation:
 *   GET  /sca/{brandId}/authorisations/{id}           login form
 *   POST /sca/{brandId}/authorisations/{id}/login     username, password -> review form (hidden session token)
 *   POST /sca/{brandId}/authorisations/{id}/decision  session, decision=approve|deny, accounts[] | debtorAccount -> 303 to the TPP
 *   POST /sca/{brandId}/authorisations/{id}/cancel    -> 303 to the TPP's nok URI
 * An authorisation is single-use: once decided its pages answer 410.
 */

type Action = 'login' | 'decision' | 'cancel';

interface ScaRoute {
  brandId: string;
  authorisationId?: string;
  action?: Action;
}

const HTML_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
};
const ROUTE = /^\/sca\/([^/]+)(?:\/authorisations\/([^/]+)(?:\/(login|decision|cancel))?)?\/?$/;

function htmlResponse(
  status: number,
  body: string,
  extraHeaders: Record<string, string> = {},
): ScaResponse {
  return { status, headers: { ...HTML_HEADERS, ...extraHeaders }, body };
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Accepts the path with or without the path part of scaBaseUrl, so a proxy prefix does not matter. */
function routeOf(scaBaseUrl: string, rawPath: string): ScaRoute | undefined {
  const basePath = trimTrailingSlash(new URL(scaBaseUrl).pathname);
  let path = rawPath.split('?')[0];
  if (basePath !== '' && path.startsWith(`${basePath}/`)) path = path.slice(basePath.length);
  const match = ROUTE.exec(path);
  if (!match) return undefined;
  const brandId = decode(match[1]);
  const authorisationId = match[2] === undefined ? undefined : decode(match[2]);
  if (brandId === undefined || (match[2] !== undefined && authorisationId === undefined))
    return undefined;
  return {
    brandId,
    ...(authorisationId !== undefined ? { authorisationId } : {}),
    ...(match[3] ? { action: match[3] as Action } : {}),
  };
}

function firstValue(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value) ?? '';
}

function allValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return [...new Set(Array.isArray(value) ? value : [value])].filter((item) => item !== '');
}

export function handleSca(context: BankContext, request: ScaRequest): ScaResponse {
  const route = routeOf(context.scaBaseUrl, request.path);
  const brand = route && findBrand(route.brandId);
  if (!route || !brand)
    return htmlResponse(
      404,
      messagePage('Sandbox bank', 'Page not found', 'There is no such page.'),
    );
  if (route.authorisationId === undefined) {
    if (request.method !== 'GET')
      return htmlResponse(
        405,
        messagePage(brand.brandName, 'Not allowed', 'Use the link your provider gave you.'),
        { Allow: 'GET' },
      );
    return htmlResponse(
      200,
      messagePage(
        brand.brandName,
        'Authorisation',
        'Follow the link your provider gave you to authorise a consent or a payment.',
      ),
    );
  }
  const authorisation = context.state.authorisations.get(route.authorisationId);
  const target =
    authorisation && authorisation.brandId === brand.brandId
      ? targetOf(context, authorisation)
      : undefined;
  if (!authorisation || !target)
    return htmlResponse(
      404,
      messagePage(
        brand.brandName,
        'Authorisation not found',
        'This authorisation link is not known.',
      ),
    );
  const expectedMethod = route.action === undefined ? 'GET' : 'POST';
  if (request.method !== expectedMethod) {
    return htmlResponse(
      405,
      messagePage(
        brand.brandName,
        'Not allowed',
        'Start again from the link your provider gave you.',
      ),
      { Allow: expectedMethod },
    );
  }
  if (authorisation.finished || !awaitsDecision(target)) {
    return htmlResponse(
      410,
      messagePage(
        brand.brandName,
        'Authorisation finished',
        'This authorisation has already been completed. You can close this page.',
      ),
    );
  }
  const flow = new ScaFlow(context, brand, authorisation, target);
  switch (route.action) {
    case undefined:
      return flow.showLogin();
    case 'login':
      return flow.login(firstValue(request.form.username), firstValue(request.form.password));
    case 'decision':
      return flow.decide(request.form);
    case 'cancel':
      return flow.reject();
  }
}

function targetOf(context: BankContext, authorisation: Authorisation): ScaTarget | undefined {
  if (authorisation.target.kind === 'payment') {
    const payment = context.state.payments.get(authorisation.target.paymentId);
    return payment && { kind: 'payment', payment };
  }
  const consent = context.state.consents.get(authorisation.target.consentId);
  return consent && { kind: 'consent', consent };
}

function awaitsDecision(target: ScaTarget): boolean {
  return target.kind === 'payment'
    ? target.payment.status === 'RCVD'
    : target.consent.status === 'received';
}

/** One authorisation's pages and decisions. */
class ScaFlow {
  private readonly endpoint: string;

  constructor(
    private readonly context: BankContext,
    private readonly brand: Brand,
    private readonly authorisation: Authorisation,
    private readonly target: ScaTarget,
  ) {
    this.endpoint = `${authorizationEndpoint(context.scaBaseUrl, brand.brandId)}/authorisations/${authorisation.authorisationId}`;
  }

  showLogin(error?: string, username?: string): ScaResponse {
    const testUsers = SANDBOX_USERS.filter(
      (user) => accountsAtBrand(user, this.brand.brandId).length > 0,
    );
    const body = loginPage({
      brandName: this.brand.brandName,
      purpose: purposeOf(this.target),
      loginAction: `${this.endpoint}/login`,
      cancelAction: `${this.endpoint}/cancel`,
      testUsers,
      ...(error !== undefined ? { error } : {}),
      ...(username !== undefined ? { username } : {}),
    });
    return htmlResponse(error === undefined ? 200 : 401, body);
  }

  login(username: string, password: string): ScaResponse {
    const user = findUser(username);
    // One message for every failure, so the page does not reveal which user names exist.
    if (
      !user ||
      user.password !== password ||
      accountsAtBrand(user, this.brand.brandId).length === 0
    ) {
      return this.showLogin('Unknown user name or wrong password for this bank.', username);
    }
    const session: ScaSession = {
      token: randomUUID(),
      authorisationId: this.authorisation.authorisationId,
      username: user.username,
    };
    this.context.state.sessions.set(session.token, session);
    return this.review(session);
  }

  private review(session: ScaSession, error?: string, status = 200): ScaResponse {
    const plan = reviewPlan(this.context, this.target, this.brand.brandId, session.username);
    const shownError = error ?? plan.problem;
    const body = reviewPage({
      brandName: this.brand.brandName,
      heading: plan.heading,
      facts: plan.facts,
      decisionAction: `${this.endpoint}/decision`,
      sessionToken: session.token,
      ...(plan.choice ? { choice: plan.choice } : {}),
      ...(shownError !== undefined ? { error: shownError } : {}),
      canApprove: plan.problem === undefined,
    });
    return htmlResponse(plan.problem === undefined ? status : 403, body);
  }

  decide(form: ScaRequest['form']): ScaResponse {
    const session = this.context.state.sessions.get(firstValue(form.session));
    if (!session || session.authorisationId !== this.authorisation.authorisationId) {
      return htmlResponse(
        403,
        messagePage(
          this.brand.brandName,
          'Session not valid',
          'Your session is not valid. Start again from the link your provider gave you.',
        ),
      );
    }
    const decision = firstValue(form.decision);
    if (decision === 'deny') return this.reject();
    if (decision !== 'approve') return this.review(session, 'Choose Approve or Deny.', 400);
    if (
      reviewPlan(this.context, this.target, this.brand.brandId, session.username).problem !==
      undefined
    )
      return this.review(session);
    return this.target.kind === 'payment'
      ? this.approvePayment(session, form)
      : this.approveConsent(session, form);
  }

  private approveConsent(session: ScaSession, form: ScaRequest['form']): ScaResponse {
    if (this.target.kind !== 'consent') throw new Error('not a consent authorisation');
    const { consent } = this.target;
    if (consent.kind === 'ais' && isBankOffered(consent.access)) {
      const owned = this.context.state.ledger
        .ownedBy(session.username, this.brand.brandId)
        .map((account) => account.seed.iban);
      const chosen = allValues(form.accounts);
      if (chosen.length === 0 || chosen.some((iban) => !owned.includes(iban)))
        return this.review(session, 'Choose at least one of your accounts to share.', 400);
      const references = () => chosen.map((iban) => ({ iban }));
      consent.access = {
        accounts: references(),
        balances: references(),
        transactions: references(),
      };
    }
    consent.status = 'valid';
    consent.psuUsername = session.username;
    return this.finish(consent.redirectUri);
  }

  private approvePayment(session: ScaSession, form: ScaRequest['form']): ScaResponse {
    if (this.target.kind !== 'payment') throw new Error('not a payment authorisation');
    const { payment } = this.target;
    const debtorIban = paymentFacts(payment.details).debtorIban ?? firstValue(form.debtorAccount);
    const debtor = this.context.state.ledger
      .ownedBy(session.username, this.brand.brandId)
      .find((account) => account.seed.iban === debtorIban);
    if (!debtor) return this.review(session, 'Choose the account to pay from.', 400);
    executePayment(this.context, payment, debtor);
    return this.finish(
      payment.status === 'RJCT'
        ? (payment.nokRedirectUri ?? payment.redirectUri)
        : payment.redirectUri,
    );
  }

  /** Deny or cancel: the consent is rejected, the payment RJCT, and the PSU goes to the nok URI when there is one. */
  reject(): ScaResponse {
    if (this.target.kind === 'payment') {
      rejectPayment(this.target.payment, 'Refused by the account holder.');
      return this.finish(this.target.payment.nokRedirectUri ?? this.target.payment.redirectUri);
    }
    this.target.consent.status = 'rejected';
    return this.finish(this.target.consent.nokRedirectUri ?? this.target.consent.redirectUri);
  }

  private finish(location: string): ScaResponse {
    this.authorisation.finished = true;
    for (const [token, session] of this.context.state.sessions) {
      if (session.authorisationId === this.authorisation.authorisationId)
        this.context.state.sessions.delete(token);
    }
    return htmlResponse(303, redirectPage(this.brand.brandName, location), { Location: location });
  }
}
