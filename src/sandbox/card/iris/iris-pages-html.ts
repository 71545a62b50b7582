import { escapeHtml } from './iris-sessions.js';

/** A small page of the sandbox's own look. */
export function sandboxPage(title: string, body: string, script = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:sans-serif;max-width:32rem;margin:2rem auto}label{display:block;margin:.5rem 0}
input{width:100%}button{margin:.25rem .25rem 0 0;padding:.5rem 1rem}.error{color:#a00}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}${script ? `<script>${script}</script>` : ''}</body></html>`;
}

const hiddenFields = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`)
    .join('');

/**
 * The page that takes the payer back to the merchant: a form POST of the result to callback_url,
 * submitted at once; extra copies (a duplicate-callback plan) go first as keepalive requests.
 */
export function callbackPage(
  callbackUrl: string,
  fields: Record<string, string>,
  copies: number,
): string {
  const form = `<form id="iris-callback" method="POST" action="${escapeHtml(callbackUrl)}">${hiddenFields(fields)}<button type="submit">Return to the merchant</button></form>`;
  const script = `const form = document.getElementById('iris-callback');
for (let copy = 1; copy < ${copies}; copy++)
  fetch(form.action, { method: 'POST', mode: 'no-cors', keepalive: true, body: new URLSearchParams(new FormData(form)) });
form.submit();`;
  return sandboxPage('Returning to the merchant', form, script);
}

/** The page of a payer who never returns to the merchant (order webhook only). */
export function closePage(): string {
  return sandboxPage(
    'Bank payment done',
    '<p id="iris-done">The bank has sent the result to the merchant. You may close this page.</p>',
  );
}
