/**
 * Whether an `Accept` header lets the sandbox answer `application/json` (RFC 9110 section 12.5.1):
 * the most specific media range that matches decides, and `q=0` excludes. No header means anything.
 */
export function acceptsJson(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  let best: { specificity: number; q: number } | undefined;
  for (const range of accept.split(',')) {
    const [mediaRange, ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const specificity =
      mediaRange === 'application/json'
        ? 3
        : mediaRange === 'application/*'
          ? 2
          : mediaRange === '*/*'
            ? 1
            : 0;
    if (specificity === 0) continue;
    const qParameter = parameters.find((parameter) => parameter.startsWith('q='));
    const q = qParameter === undefined ? 1 : Number(qParameter.slice(2));
    if (!best || specificity > best.specificity) best = { specificity, q: Number.isNaN(q) ? 0 : q };
  }
  return best !== undefined && best.q > 0;
}
