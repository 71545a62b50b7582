import { tppMessage, type TppMessage } from './errors.js';
import { type ProductRule, type ProductRules } from './types.js';

/**
 * Enforces psd2.yaml `PaymentDetails.x-portico-product-rules` as given: nothing about the
 * field matrix is written here, so the YAML stays the single source of truth.
 */

export interface ResolvedProduct {
  /** Canonical name: the key of the rule. */
  product: string;
  rule: ProductRule;
}

function isRule(value: ProductRule | string | undefined): value is ProductRule {
  return typeof value === 'object' && value !== null && Array.isArray(value.required);
}

/** The product named in the path, by its canonical name or one of its aliases. */
export function resolveProduct(
  rules: ProductRules,
  nameInPath: string,
): ResolvedProduct | undefined {
  for (const [product, rule] of Object.entries(rules)) {
    if (!isRule(rule)) continue;
    if (product === nameInPath || (rule.aliases ?? []).includes(nameInPath))
      return { product, rule };
  }
  return undefined;
}

function valueAt(body: unknown, dottedPath: string): unknown {
  let current: unknown = body;
  for (const segment of dottedPath.split('.')) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * Every missing required field (400 FORMAT_ERROR, path = the field), skipping children of a
 * parent already reported; only when the body is complete, a currency outside the product's
 * list (400 PARAMETER_NOT_CONSISTENT).
 */
export function productRuleViolations(rule: ProductRule, body: unknown): TppMessage[] {
  const missing = rule.required.filter(
    (path) => valueAt(body, path) === undefined || valueAt(body, path) === null,
  );
  const reported = missing.filter(
    (path) => !missing.some((parent) => path.startsWith(`${parent}.`)),
  );
  if (reported.length > 0) {
    return reported.map((path) =>
      tppMessage('FORMAT_ERROR', `${path} is required for this payment product`, path),
    );
  }
  const currency = valueAt(body, 'instructedAmount.currency');
  if (rule.currencies && typeof currency === 'string' && !rule.currencies.includes(currency)) {
    return [
      tppMessage(
        'PARAMETER_NOT_CONSISTENT',
        `Currency ${currency} is not allowed for this payment product (allowed: ${rule.currencies.join(', ')})`,
        'instructedAmount.currency',
      ),
    ];
  }
  return [];
}

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Checks the shape of a parsed `x-portico-product-rules` object (from YAML, so untyped) and
 * returns it typed; throws naming the first bad entry. Non-object entries (the YAML's `notes`) pass.
 */
export function toProductRules(raw: unknown): ProductRules {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error('x-portico-product-rules must be an object');
  for (const [product, entry] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof entry === 'string') continue;
    const rule = entry as Record<string, unknown> | null;
    if (typeof rule !== 'object' || rule === null)
      throw new Error(`product rule ${product} must be an object`);
    if (!isStringList(rule.required))
      throw new Error(`product rule ${product}: required must be a list of field paths`);
    if (rule.aliases !== undefined && !isStringList(rule.aliases))
      throw new Error(`product rule ${product}: aliases must be a list`);
    if (rule.currencies !== undefined && !isStringList(rule.currencies))
      throw new Error(`product rule ${product}: currencies must be a list`);
  }
  return raw as ProductRules;
}
