/**
 * Portico's tokenisation page: a card form an app embeds in an iframe. Its script sends the card
 * fields from the payer's browser straight to the provider's token endpoint with the tenant's public
 * key and hands the `ctn_` token to the embedding page by postMessage (to the declared origin only).
 * The inputs have no `name`, and the CSP forbids form submission: the card cannot reach Portico.
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
`;

export const TOKENIZE_PAGE_JS = `'use strict';
(() => {
  const $ = (id) => document.getElementById(id);
  const form = $('card');
  const { tokenizationUrl, publicKey, origin } = form.dataset;
  const embedder = window.parent !== window ? window.parent : window.opener;
  const tell = (message) => { if (embedder) embedder.postMessage(message, origin); };

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
      const answer = await fetch(tokenizationUrl, {
        method: 'POST',
        headers: { authorization: 'Basic ' + btoa(publicKey + ':') },
        body: fields,
        credentials: 'omit',
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
      const result = await answer.json().catch(() => ({}));
      if (!answer.ok || typeof result.token !== 'string') {
        const error = result.error || {};
        const failure = new Error(error.message || 'The card was not accepted (' + answer.status + ')');
        failure.code = error.code === undefined ? null : String(error.code);
        throw failure;
      }
      form.reset();
      const card = result.card || {};
      $('status').textContent = 'Card ending ' + card.last_four + ' accepted';
      tell({ type: 'portico.cardToken', token: result.token, card: { type: card.type, lastFour: card.last_four, expirationMonth: card.expiration_month, expirationYear: card.expiration_year } });
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
