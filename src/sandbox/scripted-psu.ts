/**
 * A scripted user for the sandbox: walks its SCA pages over plain HTTP, as a browser without JavaScript
 * would. Tests and the benchmark use it where no person clicks.
 */
export interface ScaChoice {
  username: string;
  password: string;
  decision: 'approve' | 'deny';
  /** IBANs to tick on a bank-offered consent. */
  accounts?: string[];
  /** IBAN to pick as the payment's debtor account. */
  debtorAccount?: string;
}

const decode = (text: string) =>
  text
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

function formAction(html: string, base: string, index = 0): string {
  const actions = [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) =>
    decode(m[1]),
  );
  if (!actions[index]) throw new Error(`no form #${index} on the page:\n${html}`);
  return new URL(actions[index], base).toString();
}

async function post(url: string, fields: [string, string][]): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Returns where the bank sends the browser after the decision (the Location of its 303). */
export async function completeSca(scaRedirect: string, choice: ScaChoice): Promise<string> {
  const login = await fetch(scaRedirect);
  if (login.status !== 200) throw new Error(`SCA page answered ${login.status}`);
  const review = await post(formAction(await login.text(), scaRedirect), [
    ['username', choice.username],
    ['password', choice.password],
  ]);
  const reviewHtml = await review.text();
  if (review.status !== 200) throw new Error(`login answered ${review.status}:\n${reviewHtml}`);
  const session = /name="session" value="([^"]+)"/.exec(reviewHtml)?.[1];
  if (!session) throw new Error(`no session on the review page:\n${reviewHtml}`);
  const decisionForm = [...reviewHtml.matchAll(/<form method="post" action="([^"]+)"/g)]
    .map((m) => decode(m[1]))
    .find((action) => action.endsWith('/decision'));
  if (!decisionForm) throw new Error(`no decision form:\n${reviewHtml}`);
  const fields: [string, string][] = [
    ['session', decode(session)],
    ['decision', choice.decision],
  ];
  for (const iban of choice.accounts ?? []) fields.push(['accounts', iban]);
  if (choice.debtorAccount) fields.push(['debtorAccount', choice.debtorAccount]);
  const decided = await post(new URL(decisionForm, scaRedirect).toString(), fields);
  const location = decided.headers.get('location');
  if (decided.status !== 303 || !location)
    throw new Error(`decision answered ${decided.status}:\n${await decided.text()}`);
  return location;
}
