/**
 * The auditor's web page: one HTML document, its script and its style, served by Portico itself (no CDN,
 * no build step). The script calls the auditor API with the key the auditor types in (kept in this tab's
 * sessionStorage only) and builds every element with textContent, never HTML from data. Every kind the
 * auditor API lists is searchable, and tenants are shown and chosen by name.
 */
export const AUDITOR_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Portico audit</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/audit/page.css">
<script src="/audit/page.js" defer></script>
</head>
<body>
<header>
  <h1>Portico audit trail</h1>
  <div id="chain" class="chain" aria-live="polite"></div>
  <button id="logout" hidden>Log out</button>
</header>
<main>
  <form id="login" class="card">
    <h2>Log in</h2>
    <label>Auditor API key <input id="key" type="password" autocomplete="off" required placeholder="ptk_..."></label>
    <button type="submit">Log in</button>
    <p id="login-error" class="error" role="alert"></p>
  </form>
  <section id="workspace" hidden>
    <form id="search" class="card">
      <h2>Search</h2>
      <label>Kind <select id="kind">
        <optgroup label="Open banking"><option value="consents">Consents</option><option value="payments">Payments</option></optgroup>
        <optgroup label="Cards"><option value="card:payment">Card payments</option><option value="card:refund">Refunds</option><option value="card:customer">Customers</option><option value="card:notification">Notifications (payment links)</option><option value="card:iris_session">IRIS bank-payment sessions</option></optgroup>
        <optgroup label="POS"><option value="card:pos_payment">POS transactions</option><option value="card:pos_void">POS voids</option></optgroup>
        <optgroup label="Marketplace"><option value="card:seller">Sellers</option><option value="card:transfer">Transfers</option><option value="card:reversal">Reversals</option><option value="card:payout">Payouts</option></optgroup>
        <optgroup label="Wallets"><option value="card:wallet_token">Wallet tokenisations</option><option value="card:wallet_domain">Wallet domains</option></optgroup>
        <optgroup label="Reconciliation"><option value="reconciliation:runs">Reconciliation runs</option><option value="reconciliation:drifts">Drifts</option></optgroup>
      </select></label>
      <label>Tenant <input id="tenant" list="tenant-names" autocomplete="off" placeholder="name or id"></label>
      <datalist id="tenant-names"></datalist>
      <label>Status or class <input id="status" placeholder="valid, RCVD, Captured, amount-differs..."></label>
      <label>Provider's id <input id="provider-id" placeholder="pmt_..., sel_..., a POS transactionId"></label>
      <label>From <input id="from" type="datetime-local"></label>
      <label>To <input id="to" type="datetime-local"></label>
      <button type="submit">Search</button>
      <p id="search-error" class="error" role="alert"></p>
    </form>
    <section class="card"><h2>Results <span id="total"></span></h2><table id="results"><thead><tr><th>Created</th><th>Id</th><th>Tenant</th><th>Bank or kind</th><th>Status</th><th>Amount</th></tr></thead><tbody></tbody></table></section>
    <section id="detail" class="card" hidden><h2 id="detail-title"></h2><dl id="detail-facts"></dl><h3>Timeline</h3><ol id="timeline"></ol></section>
  </section>
</main>
</body>
</html>
`;

export const AUDITOR_PAGE_CSS = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f4f6f9; }
header { display: flex; gap: 1rem; align-items: center; padding: .8rem 1.5rem; background: #1d2330; color: #fff; }
header h1 { font-size: 1.15rem; margin: 0; flex: 1; }
main { max-width: 1100px; margin: 1.5rem auto; padding: 0 1rem; }
.card { background: #fff; border-radius: 8px; padding: 1rem 1.25rem; margin-bottom: 1rem; box-shadow: 0 1px 3px rgba(0,0,0,.08); }
label { display: inline-flex; flex-direction: column; margin: 0 .8rem .6rem 0; font-size: .85rem; color: #4a5365; }
input, select, button { font: inherit; padding: .35rem .5rem; }
button { cursor: pointer; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid #e3e7ee; font-size: .9rem; }
tbody tr { cursor: pointer; }
tbody tr:hover { background: #eef3fb; }
.chain { font-size: .9rem; padding: .25rem .6rem; border-radius: 4px; }
.chain.ok { background: #1f7a3f; }
.chain.broken { background: #b3261e; }
.error { color: #b3261e; }
#timeline { list-style: none; padding: 0; }
#timeline li { border-left: 3px solid #8aa0c8; margin: 0 0 .5rem .4rem; padding: .2rem .7rem; }
#timeline li.change { border-color: #1f5fbf; }
#timeline li.access.failed { border-color: #b3261e; }
#timeline time { color: #4a5365; font-size: .8rem; display: block; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; }
dt { color: #4a5365; }
code { font-size: .85rem; }
`;

export const AUDITOR_PAGE_JS = `'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
  let key = sessionStorage.getItem('portico-auditor-key');

  async function api(path) {
    const answer = await fetch(path, { headers: { authorization: 'Bearer ' + key, accept: 'application/json' } });
    const body = await answer.json().catch(() => ({}));
    if (!answer.ok) throw new Error((body.title || answer.status) + (body.detail ? ': ' + body.detail : ''));
    return body;
  }

  async function showChain() {
    const chain = $('chain');
    chain.textContent = 'Verifying the chain...';
    chain.className = 'chain';
    const report = await api('/v1/audit/verification');
    const checkpoint = report.checkpoints.latest ? ', checkpoint ' + report.checkpoints.latest.seq + ' signed ' + report.checkpoints.latest.signedAt : ', no checkpoint yet';
    if (report.ok) {
      chain.textContent = 'Chain verified: ' + report.links + ' links' + checkpoint;
      chain.className = 'chain ok';
    } else {
      const b = report.firstBreak;
      chain.textContent = 'Chain BROKEN: ' + b.problem + (b.seq ? ' at link ' + b.seq : '') + ' (' + b.detail + ')';
      chain.className = 'chain broken';
    }
  }

  async function enter() {
    await showChain();
    await rememberTenants('');
    $('login').hidden = true;
    $('workspace').hidden = false;
    $('logout').hidden = false;
    await search();
  }

  $('login').addEventListener('submit', async (event) => {
    event.preventDefault();
    key = $('key').value.trim();
    try {
      await enter();
      sessionStorage.setItem('portico-auditor-key', key);
      $('login-error').textContent = '';
    } catch (error) {
      $('login-error').textContent = 'Cannot log in: ' + error.message;
      $('chain').textContent = '';
    }
  });
  $('logout').addEventListener('click', () => { sessionStorage.removeItem('portico-auditor-key'); location.reload(); });

  function isoOf(value) { return value ? new Date(value).toISOString() : undefined; }
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  const tenantNames = new Map();
  const KIND_NAMES = { payment: 'Card payment', refund: 'Refund', customer: 'Customer', notification: 'Notification', iris_session: 'IRIS session', pos_payment: 'POS transaction', pos_void: 'POS void', seller: 'Seller', transfer: 'Transfer', reversal: 'Reversal', payout: 'Payout', wallet_token: 'Wallet tokenisation', wallet_domain: 'Wallet domain' };
  const tenantOf = (id) => tenantNames.get(id) || id;
  const euros = (cents) => (cents === null || cents === undefined ? '' : '\u20ac' + (cents / 100).toFixed(2));
  const paymentAmount = (item) => { const a = item.payment && item.payment.instructedAmount; return a ? a.amount + ' ' + a.currency : ''; };

  async function rememberTenants(name) {
    const query = new URLSearchParams({ pageSize: '200' });
    if (name) query.set('name', name);
    const page = await api('/v1/audit/tenants?' + query);
    for (const tenant of page.items) tenantNames.set(tenant.id, tenant.name);
    $('tenant-names').replaceChildren(...page.items.map((tenant) => { const option = el('option'); option.value = tenant.name; return option; }));
  }
  let typing;
  $('tenant').addEventListener('input', () => {
    clearTimeout(typing);
    const name = $('tenant').value.trim();
    if (!UUID.test(name)) typing = setTimeout(() => rememberTenants(name).catch(() => undefined), 200);
  });

  /** The list a kind is read from, and how a row of it is shown. */
  function sourceOf(kind) {
    if (kind === 'consents') return { path: '/v1/audit/consents', query: {}, row: (i) => ({ id: i.consentId, shown: i.consentId, detail: i.brandId, amount: '' }) };
    if (kind === 'payments') return { path: '/v1/audit/payments', query: {}, row: (i) => ({ id: i.paymentId, shown: i.paymentId, detail: i.brandId, amount: paymentAmount(i) }) };
    if (kind === 'reconciliation:runs') return { path: '/v1/audit/reconciliation/runs', query: {}, row: (i) => ({ id: i.id, at: i.startedAt, shown: i.capability + ' ' + i.from + (i.to === i.from ? '' : ' to ' + i.to), detail: 'Run, ' + i.trigger, status: i.status, amount: driftsOf(i) }), open: showRun };
    if (kind === 'reconciliation:drifts') return { path: '/v1/audit/reconciliation/drifts', query: {}, statusFilter: 'class', row: (i) => ({ id: i.id, at: i.detectedAt, shown: i.token || i.porticoId || '', detail: 'Drift of a ' + (i.capability === 'open-banking' ? (i.kind === 'payment' ? 'Payment initiation' : 'Consent') : KIND_NAMES[i.kind] || i.kind).toLowerCase(), status: i.class, amount: '' }), open: showDrift };
    const cardKind = kind.slice('card:'.length);
    return { path: '/v1/audit/card-resources', query: { kind: cardKind }, card: true, row: (i) => ({ id: i.id, shown: i.token || i.id, detail: KIND_NAMES[i.kind] || i.kind, amount: euros(i.amount) }) };
  }

  async function search() {
    const kind = $('kind').value;
    const source = sourceOf(kind);
    const query = new URLSearchParams({ pageSize: '50', ...source.query });
    const tenant = $('tenant').value.trim();
    const filters = { [UUID.test(tenant) ? 'tenantId' : 'tenantName']: tenant, [source.statusFilter || 'status']: $('status').value.trim(), createdFrom: isoOf($('from').value), createdTo: isoOf($('to').value) };
    if (source.card) filters.providerId = $('provider-id').value.trim();
    for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
    const body = $('results').tBodies[0];
    try {
      const page = await api(source.path + '?' + query);
      const unknown = page.items.some((item) => !tenantNames.has(item.tenantId));
      if (unknown) await rememberTenants(UUID.test(tenant) ? '' : tenant);
      $('search-error').textContent = '';
      $('total').textContent = '(' + page.totalCount + ')';
      body.replaceChildren(...page.items.map((item) => {
        const shown = source.row(item);
        const row = el('tr');
        row.dataset.id = shown.id;
        for (const text of [shown.at || item.createdAt, shown.shown, tenantOf(item.tenantId), shown.detail, shown.status || item.status, shown.amount]) row.append(el('td', text));
        row.addEventListener('click', () => (source.open ? source.open(item) : show(kind, shown.id)));
        return row;
      }));
    } catch (error) {
      $('search-error').textContent = error.message;
    }
  }
  $('search').addEventListener('submit', (event) => { event.preventDefault(); search(); });

  async function show(kind, id) {
    const source = sourceOf(kind);
    const detail = await api(source.path + '/' + encodeURIComponent(id));
    let title;
    let facts;
    if (source.card) {
      title = (KIND_NAMES[detail.kind] || detail.kind) + ' ' + (detail.token || id);
      facts = { Tenant: tenantOf(detail.tenantId), 'Tenant id': detail.tenantId, Kind: KIND_NAMES[detail.kind] || detail.kind, "Provider's id": detail.token || '-', Parent: detail.parentToken || '-', 'Merchant ref': detail.merchantRef || '-', Amount: euros(detail.amount) || '-', Status: detail.status, Created: detail.createdAt, Updated: detail.updatedAt, "Portico's id": detail.id };
    } else {
      title = (kind === 'consents' ? 'Consent ' : 'Payment ') + id;
      facts = { Tenant: tenantOf(detail.tenantId), 'Tenant id': detail.tenantId, Bank: detail.brandId, Status: detail.status, Created: detail.createdAt, "Bank's id": detail.upstreamConsentId || detail.upstreamPaymentId || '-', 'Last SCA': detail.lastScaAt || '-' };
    }
    showDetail(title, facts, timelineOf(detail, source.card));
  }

  function showDetail(title, facts, events) {
    $('detail').hidden = false;
    $('detail-title').textContent = title;
    $('detail-facts').replaceChildren(...Object.entries(facts).flatMap(([name, value]) => [el('dt', name), el('dd', value)]));
    $('timeline').replaceChildren(...events.map((event) => {
      const item = el('li', undefined, event.cls);
      item.append(el('time', event.at), el('strong', event.text), el('div', event.note));
      return item;
    }));
    $('detail').scrollIntoView();
  }

  function timelineOf(detail, card) {
    return [
      ...detail.history.map((h) => ({ at: h.at, cls: 'change', text: (h.from || 'new') + ' \\u2192 ' + h.to, note: 'cause ' + h.cause + (h.requestId ? ', request ' + h.requestId : '') })),
      ...detail.accessLog.map((a) => ({ at: a.at, cls: 'access' + (/^(ok|sent)/.test(a.outcome) ? '' : ' failed'), text: a.operation + ': ' + a.outcome + (a.upstreamStatus ? (card ? ' (provider ' : ' (bank ') + a.upstreamStatus + ')' : ''), note: (card ? '' : (a.psuPresent ? 'user present' : 'user not present') + (a.accountId ? ', account ' + a.accountId : '') + ', ') + (a.latencyMs !== null ? a.latencyMs + ' ms' : 'no outcome yet') + (a.requestId ? ', request ' + a.requestId : '') })),
    ].sort((x, y) => x.at.localeCompare(y.at));
  }

  /** A run's drifts in its counts (the classes Portico flags), for its row. */
  const DRIFT_CLASSES = ['amount-differs', 'portico-ahead', 'portico-only'];
  const driftsOf = (run) => {
    if (!run.counts) return '';
    const n = DRIFT_CLASSES.reduce((sum, name) => sum + (run.counts[name] || 0), 0);
    return n + (n === 1 ? ' drift' : ' drifts');
  };
  const valuesText = (values) => (values ? Object.entries(values).map(([name, value]) => name + ' ' + (value === null ? '-' : value)).join(', ') : 'not found at the provider');

  /** A run: its window, outcome and counts, and its drifts as the timeline. */
  async function showRun(run) {
    const drifts = await api('/v1/audit/reconciliation/drifts?pageSize=200&runId=' + encodeURIComponent(run.id));
    const counts = Object.fromEntries(Object.entries(run.counts || {}).map(([name, n]) => [name, String(n)]));
    showDetail('Reconciliation run ' + run.capability + ' ' + run.from + ' to ' + run.to, {
      Tenant: tenantOf(run.tenantId), 'Tenant id': run.tenantId, Capability: run.capability, Window: run.from + ' to ' + run.to, Trigger: run.trigger, Status: run.status, ...counts,
      'Provider requests': String(run.requests), Duration: run.durationMs === null ? '-' : run.durationMs + ' ms', Started: run.startedAt, Finished: run.finishedAt || '-', Error: run.error || '-', "Run's id": run.id,
    }, drifts.items.map((d) => ({ at: d.detectedAt, cls: 'change', text: d.class + ': ' + (KIND_NAMES[d.kind] || d.kind) + ' ' + (d.token || d.porticoId), note: 'Portico: ' + valuesText(d.portico) + '; provider: ' + valuesText(d.provider) })));
  }

  /** A drift: both sides' values, and the history of Portico's row of it. */
  async function showDrift(drift) {
    // An open-banking drift's row is a consent's or a payment's; every other one is a card resource.
    const bank = drift.capability === 'open-banking';
    const source = bank ? sourceOf(drift.kind === 'consent' ? 'consents' : 'payments') : { path: '/v1/audit/card-resources', card: true };
    const row = drift.porticoId ? await api(source.path + '/' + encodeURIComponent(drift.porticoId)) : undefined;
    showDetail('Drift ' + drift.class + ' ' + (drift.token || drift.porticoId), {
      Tenant: tenantOf(drift.tenantId), 'Tenant id': drift.tenantId, Class: drift.class, Kind: KIND_NAMES[drift.kind] || drift.kind, "Provider's id": drift.token || '-', "Portico's id": drift.porticoId || '-',
      "Portico's values": valuesText(drift.portico), "Provider's values": valuesText(drift.provider), Detected: drift.detectedAt, Run: drift.runId,
    }, row ? timelineOf(row, !bank) : []);
  }

  if (key) enter().catch(() => { sessionStorage.removeItem('portico-auditor-key'); key = null; });
})();
`;
