import { request } from 'undici';

export interface Page {
  status: number;
  html: string;
}

const unescape = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** A sandbox page fetched or posted to as a browser would (form bodies, no script run). */
export async function page(url: string, form?: Record<string, string>): Promise<Page> {
  const response = await request(url, {
    method: form ? 'POST' : 'GET',
    headers: form ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
    body: form ? new URLSearchParams(form).toString() : undefined,
  });
  return { status: response.statusCode, html: await response.body.text() };
}

/** The action and hidden fields of the first form of an HTML text. */
export function formOf(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form[^>]*action="([^"]*)"/.exec(html)?.[1];
  if (action === undefined) throw new Error(`no form in ${html.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[match[1]] = unescape(match[2]);
  return { action: unescape(action), fields };
}
