import { Injectable, type PipeTransform } from '@nestjs/common';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import { CARD } from '#src/upstreams/card/card-schemas.js';

/**
 * A facade body (camelCase) checked against a card.yaml request schema and turned into the provider's
 * form (snake_case): one schema for the docs, the validation and the mapping. Problems name the
 * facade's fields.
 */
@Injectable()
class CardBodyPipe implements PipeTransform {
  constructor(private readonly schema: string) {}

  transform(body: unknown): Record<string, unknown> {
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
    return value as Record<string, unknown>;
  }
}

/** `@Body(CardBody('CreatePaymentForm'))`: the body as the provider's form, validated by card.yaml. */
export const CardBody = (schema: string) => new CardBodyPipe(schema);
