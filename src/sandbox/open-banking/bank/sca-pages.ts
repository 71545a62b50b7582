import { html, page, type SafeHtml } from './html.js';

/** The PSU-facing pages. No JavaScript: plain forms, labelled fields, server-side state only. */

export interface ReviewFact {
  term: string;
  detail: string;
}

export interface AccountOption {
  iban: string;
  label: string;
}

export interface LoginView {
  brandName: string;
  /** What the PSU is about to authorise, in one sentence. */
  purpose: string;
  loginAction: string;
  cancelAction: string;
  testUsers: readonly { username: string; password: string }[];
  error?: string;
  username?: string;
}

export interface ReviewView {
  brandName: string;
  heading: string;
  facts: readonly ReviewFact[];
  decisionAction: string;
  sessionToken: string;
  /** The PSU picks accounts (bank-offered consent) or the account to pay from (payment without debtorAccount). */
  choice?: {
    field: 'accounts' | 'debtorAccount';
    legend: string;
    options: readonly AccountOption[];
  };
  error?: string;
  /** False when the request cannot be approved by this PSU (e.g. names someone else's account); only Deny is offered. */
  canApprove: boolean;
}

function errorBox(error: string | undefined): SafeHtml | string {
  return error === undefined ? '' : html`<p class="error" role="alert">${error}</p>`;
}

export function loginPage(view: LoginView): string {
  const hints = view.testUsers.map(
    (user, index) => html`${index > 0 ? ', ' : ''}${user.username} / ${user.password}`,
  );
  return page(
    'Log in to authorise',
    view.brandName,
    html`<p>${view.purpose}</p>
${errorBox(view.error)}
<p class="hint">Sandbox: ${hints}</p>
<form method="post" action="${view.loginAction}">
<label for="username">User name</label>
<input type="text" id="username" name="username" autocomplete="username" required value="${view.username ?? ''}">
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required>
<div class="actions"><button type="submit" class="primary">Log in</button></div>
</form>
<form method="post" action="${view.cancelAction}">
<div class="actions"><button type="submit" class="secondary">Cancel and return</button></div>
</form>`,
  );
}

function choiceFieldset(choice: NonNullable<ReviewView['choice']>): SafeHtml {
  const type = choice.field === 'accounts' ? 'checkbox' : 'radio';
  const options = choice.options.map(
    (option, index) =>
      html`<label for="${choice.field}-${index}"><input type="${type}" id="${choice.field}-${index}" name="${choice.field}" value="${option.iban}"> ${option.label}</label>
`,
  );
  return html`<fieldset>
<legend>${choice.legend}</legend>
${options}</fieldset>`;
}

export function reviewPage(view: ReviewView): string {
  const facts = view.facts.map(
    (fact) => html`<dt>${fact.term}</dt><dd>${fact.detail}</dd>
`,
  );
  const approve = view.canApprove
    ? html`<button type="submit" name="decision" value="approve" class="primary">Approve</button>`
    : '';
  return page(
    view.heading,
    view.brandName,
    html`${errorBox(view.error)}
<dl>
${facts}</dl>
<form method="post" action="${view.decisionAction}">
<input type="hidden" name="session" value="${view.sessionToken}">
${view.choice && view.canApprove ? choiceFieldset(view.choice) : ''}
<div class="actions">${approve}<button type="submit" name="decision" value="deny" class="secondary">Deny</button></div>
</form>`,
  );
}

export function messagePage(brandName: string, title: string, message: string): string {
  return page(title, brandName, html`<p>${message}</p>`);
}

export function redirectPage(brandName: string, location: string): string {
  // Escaping does not defuse a javascript: URL, so only web URLs become links.
  const target = /^https?:\/\//i.test(location)
    ? html`<a href="${location}">${location}</a>`
    : html`${location}`;
  return page('Returning to the provider', brandName, html`<p>Continue to ${target}.</p>`);
}
