// The payer's browser on the provider's hosted pages (IRIS), as one without scripts: forms are read from
// the HTML and posted.
const unescape = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

export interface Form {
  action: string;
  fields: Record<string, string>;
}

/** The action (absolute, against `base`) and hidden fields of the first form of an HTML text. */
export function formOf(html: string, base: string): Form | undefined {
  const action = /<form[^>]*action="([^"]*)"/i.exec(html)?.[1];
  if (action === undefined) return undefined;
  const fields: Record<string, string> = {};
  for (const match of html.matchAll(
    /<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g,
  ))
    fields[match[1]] = unescape(match[2]);
  return { action: new URL(unescape(action), base).toString(), fields };
}

/** Posts a form as a browser does; the answer's status, text and Location. */
export async function submit(
  url: string,
  fields: Record<string, string>,
): Promise<{ status: number; html: string; location: string | null }> {
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
    signal: AbortSignal.timeout(30_000),
  });
  return {
    status: response.status,
    html: await response.text(),
    location: response.headers.get('location'),
  };
}
