import type { Schema } from './openapi-contract.js';

/**
 * A form that takes exactly one source of a card (`x-portico-one-source` in card.yaml): its groups of
 * fields (the card arguments, the token), and the provider's codes for a form with neither and with both.
 */
export interface OneSourceRule {
  groups: string[][];
  neither: number;
  /** The field the provider's refusal of a form with neither names, if any. */
  neitherField?: string;
  both: number;
}

const EXTENSION = 'x-portico-one-source';

/** The rule of a component schema: its own, or that of a schema it refers to or extends (`allOf`). */
export function oneSourceRuleOf(
  schemas: Record<string, Schema>,
  schema: Schema | undefined,
  depth = 0,
): OneSourceRule | undefined {
  if (!schema || depth > 10) return undefined;
  if (schema[EXTENSION]) return schema[EXTENSION] as OneSourceRule;
  if (typeof schema.$ref === 'string')
    return oneSourceRuleOf(
      schemas,
      schemas[schema.$ref.replace('#/components/schemas/', '')],
      depth + 1,
    );
  for (const part of (schema.allOf as Schema[] | undefined) ?? []) {
    const found = oneSourceRuleOf(schemas, part, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The groups a form (in the provider's spelling) gives at least one field of. */
export function sourcesGiven(rule: OneSourceRule, form: Record<string, unknown>): string[][] {
  return rule.groups.filter((group) => group.some((field) => form[field] !== undefined));
}
