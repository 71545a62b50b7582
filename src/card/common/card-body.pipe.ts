import { Injectable, type PipeTransform } from '@nestjs/common';
import type { components } from '#src/generated/card.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import { CARD } from '#src/upstreams/card/card-schemas.js';

export type CardSchemaName = keyof components['schemas'];

/** A card.yaml request schema as the provider takes it (snake_case): what `CardBody(name)` answers. */
export type CardForm<S extends CardSchemaName> = components['schemas'][S];

/**
 * A facade body (camelCase) checked against a card.yaml request schema and turned into the provider's
 * form (snake_case): one schema for the docs, the validation and the mapping. Problems name the
 * facade's fields.
 */
@Injectable()
class CardBodyPipe<S extends CardSchemaName> implements PipeTransform {
  constructor(private readonly schema: S) {}

  transform(body: unknown): CardForm<S> {
    const input = body === undefined || body === null ? {} : body;
    if (typeof input !== 'object' || Array.isArray(input))
      throw new ValidationFailedException([{ field: 'body', reason: 'must be a JSON object' }]);
    const { value, problems } = CARD.check(this.schema, input);
    if (problems.length) {
      // One entry per field, its reasons joined, as the rest of the facade answers.
      const byField = new Map<string, string[]>();
      for (const problem of problems) {
        const field = problem.path || 'body';
        byField.set(field, [...(byField.get(field) ?? []), problem.message]);
      }
      throw new ValidationFailedException(
        [...byField].map(([field, reasons]) => ({ field, reason: reasons.join('; ') })),
      );
    }
    // Valid against card.yaml's schema, in its spelling.
    return value as CardForm<S>;
  }
}

/** `@Body(CardBody('CreatePaymentForm'))`: the body as the provider's form, validated by card.yaml. */
export const CardBody = <S extends CardSchemaName>(schema: S) => new CardBodyPipe(schema);
