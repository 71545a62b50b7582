/**
 * Portico's tokenisation page: a card form an app embeds in an iframe. Its script sends the card
 * fields from the payer's browser straight to the provider's token endpoint with the tenant's public
 * key and hands the `ctn_` token to the embedding page by postMessage (to the declared origin only).
 * The inputs have no `name`, and the CSP forbids form submission: the card cannot reach Portico.
 * For a 3-D Secure merchant the provider's 3-D Secure tokenisation runs instead, its challenge framed here.
 */
const escapeAttribute = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

export function tokenizePageHtml(page: {
  tokenizationUrl: string;
  publicKey: string;
  origin: string;
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Card</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/card/tokenize.css">
<script src="/card/tokenize.js" defer></script>
</head>
<body>
<form id="card" data-tokenization-url="${escapeAttribute(page.tokenizationUrl)}" data-public-key="${escapeAttribute(page.publicKey)}" data-origin="${escapeAttribute(page.origin)}">
  <label>Card number <input id="card-number" inputmode="numeric" autocomplete="cc-number" maxlength="23" required></label>
  <div class="row">
    <label>Month <input id="expiration-month" inputmode="numeric" autocomplete="cc-exp-month" placeholder="MM" maxlength="2" required></label>
    <label>Year <input id="expiration-year" inputmode="numeric" autocomplete="cc-exp-year" placeholder="YYYY" maxlength="4" required></label>
    <label>CVV <input id="cvv" inputmode="numeric" autocomplete="cc-csc" maxlength="4" required></label>
  </div>
  <label>Name on card <input id="holder-name" autocomplete="cc-name" maxlength="255" required></label>
  <button type="submit" id="submit">Use this card</button>
  <p id="status" role="status" aria-live="polite"></p>
</form>
</body>
</html>
`;
}

export const TOKENIZE_PAGE_CSS = `
body { font: 15px/1.4 system-ui, sans-serif; margin: 0; padding: .5rem; color: #1d2330; }
label { display: flex; flex-direction: column; font-size: .85rem; color: #4a5365; margin-bottom: .5rem; }
input, button { font: inherit; padding: .4rem .5rem; }
.row { display: flex; gap: .5rem; }
.row label { flex: 1; }
button { cursor: pointer; }
.error { color: #b3261e; }
#challenge { width: 100%; height: 14rem; border: 1px solid #c8ccd4; margin-top: .5rem; }
`;

export const TOKENIZE_PAGE_JS = `'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const form = $('card');
  const { tokenizationUrl, publicKey, origin } = form.dataset;
  const embedder = window.parent !== window ? window.parent : window.opener;
  const tell = (message) => { if (embedder) embedder.postMessage(message, origin); };
  const authorization = 'Basic ' + btoa(publicKey + ':');
  const send = (url, body) => fetch(url, {
    method: body ? 'POST' : 'GET',
    headers: { authorization },
    body,
    credentials: 'omit',
    cache: 'no-store',
    referrerPolicy: 'no-referrer',
  });
  const refusal = (result, status) => {
    const error = (result && result.error) || {};
    const failure = new Error(error.message || 'The card was not accepted (' + status + ')');
    failure.code = error.code === undefined ? null : String(error.code);
    return failure;
  };
  const read = async (answer) => {
    const result = await answer.json().catch(() => ({}));
    if (!answer.ok) throw refusal(result, answer.status);
    return result;
  };
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // A 3-D Secure merchant (the provider refuses its direct tokenisation, 20013): the issuer
  // authenticates the payer, in a challenge framed here when it asks for one; the token comes after.
  const authenticate = async (fields) => {
    const url = tokenizationUrl + '/3dsecure';
    let state = await read(await send(url, fields));
    if (state.status !== 'challenge') return state;
    const challenge = document.createElement('iframe');
    challenge.id = 'challenge';
    challenge.title = 'Your bank';
    challenge.src = state.challenge_url;
    $('status').textContent = 'Your bank asks you to confirm';
    form.appendChild(challenge);
    try {
      const until = Date.now() + 15 * 60 * 1000;
      while (state.status === 'challenge') {
        if (Date.now() > until) throw new Error('The card check took too long');
        await pause(700);
        state = await read(await send(url + '/' + encodeURIComponent(state.token)));
      }
      return state;
    } finally {
      challenge.remove();
    }
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    $('submit').disabled = true;
    $('status').className = '';
    $('status').textContent = 'Checking the card...';
    const fields = new URLSearchParams({
      card_number: $('card-number').value.replace(/[\\s-]/g, ''),
      expiration_month: $('expiration-month').value.trim(),
      expiration_year: $('expiration-year').value.trim(),
      holder_name: $('holder-name').value.trim(),
      cvv: $('cvv').value.trim(),
    });
    try {
      const answer = await send(tokenizationUrl, fields);
      let result = await answer.json().catch(() => ({}));
      let token = result.token;
      if (!answer.ok && result.error && String(result.error.code) === '20013') {
        result = await authenticate(fields);
        token = result.card_token;
      } else if (!answer.ok) throw refusal(result, answer.status);
      if (typeof token !== 'string') throw refusal(result, answer.status);
      form.reset();
      const card = result.card || {};
      const tds = card.tds && card.tds.enrolled ? { enrolled: card.tds.enrolled, eciFlag: card.tds.eci_flag, authDesc: card.tds.auth_desc } : null;
      $('status').textContent = 'Card ending ' + card.last_four + ' accepted';
      tell({ type: 'portico.cardToken', token, card: { type: card.type, lastFour: card.last_four, expirationMonth: card.expiration_month, expirationYear: card.expiration_year }, threeDSecure: tds });
    } catch (error) {
      $('status').className = 'error';
      $('status').textContent = error.message;
      tell({ type: 'portico.cardTokenError', message: error.message, code: error.code === undefined ? null : error.code });
    } finally {
      $('submit').disabled = false;
    }
  });
  tell({ type: 'portico.cardFormReady' });
})();
`;
