import { applyDecorators, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiBody, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { ApiProblems } from '../../platform/errors/api-problem-responses.js';
import { ValidationFailedException } from '../../platform/errors/to-problem.js';
import { camelCase } from '../../platform/openapi/camel-case-schemas.js';
import type { Schema } from '../../shared/contracts/openapi-contract.js';
import { CARD, cardContract } from '../../upstreams/card/card-schemas.js';
import { UPSTREAM_PROBLEMS } from '../../upstreams/http/upstream-problems.js';

/** What every card operation may answer besides its own outcome. */
export const ApiCardProblems = (extra: Record<number, string> = {}) =>
  ApiProblems({
    ...UPSTREAM_PROBLEMS,
    409: 'The tenant has no card merchant keys yet (an operator sets them), or the provider refused the request as conflicting (`upstream.code`, e.g. 40025 duplicate merchantRef)',
    ...extra,
  });

/** The request body, documented as the camelCase form of a card.yaml request schema. */
export function ApiCardBody(schema: string, example?: Record<string, unknown>): MethodDecorator {
  return ApiBody({
    required: true,
    schema: { allOf: [CARD.ref(schema)], ...(example ? { example } : {}) },
  });
}

/** An answer documented as the camelCase form of a card.yaml answer schema. */
export function ApiCardAnswer(
  status: number,
  schema: string,
  description: string,
): MethodDecorator {
  return ApiResponse({ status, description, schema: CARD.ref(schema) });
}

const queryParameters = (operationId: string) =>
  cardContract
    .operation(operationId)
    .parameters.filter((parameter) => parameter.in === 'query')
    .map((parameter) => ({ ...parameter, facadeName: camelCase(parameter.name) }));

/** The query arguments of a card list operation, documented with card.yaml's schemas in camelCase. */
export function ApiCardQuery(operationId: string): MethodDecorator {
  return applyDecorators(
    ...queryParameters(operationId).map((parameter) =>
      ApiQuery({
        name: parameter.facadeName,
        required: false,
        schema: withoutExtensions(CARD.resolveSchema(parameter.schema ?? {})),
        description: (parameter as { description?: string }).description,
      }),
    ),
  );
}

function withoutExtensions(schema: Schema): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !key.startsWith('x-')));
}

/** A provider id in a path (`pmt_…`), or Portico's id of a write in doubt (a UUID). */
export function ApiCardId(name: string, what: string): MethodDecorator {
  return ApiParam({
    name,
    description: `The ${what}'s id at the provider${name === 'paymentId' || name === 'refundId' || name === 'customerId' ? ", or Portico's id of one whose creation is in doubt" : ''}`,
    schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' },
  });
}

@Injectable()
class CardQueryPipe implements PipeTransform {
  constructor(private readonly operationId: string) {}

  transform(query: unknown): Record<string, string | number | undefined> {
    const input = (query ?? {}) as Record<string, unknown>;
    const parameters = queryParameters(this.operationId);
    const out: Record<string, string | number | undefined> = {};
    const errors: { field: string; reason: string }[] = [];
    for (const [name, raw] of Object.entries(input)) {
      const parameter = parameters.find((p) => p.facadeName === name);
      if (!parameter) {
        errors.push({ field: name, reason: `${name} is not an argument of this list` });
        continue;
      }
      if (typeof raw !== 'string') {
        errors.push({ field: name, reason: `${name} must be given once` });
        continue;
      }
      const schema = CARD.resolveSchema(parameter.schema ?? {});
      const numeric = schema.type === 'integer' && /^-?\d{1,12}$/.test(raw);
      const value = numeric ? Number(raw) : raw;
      const problems = cardContract.validate(parameter.schema ?? {}, value, '');
      if (problems.length)
        errors.push({
          field: name,
          reason: problems.map((p) => `${name} ${p.message}`).join('; '),
        });
      else out[parameter.name] = value;
    }
    if (errors.length) throw new ValidationFailedException(errors, 'request query');
    return out;
  }
}

/** `@Query(CardQuery('listPayments'))`: the query as the provider's arguments, checked by card.yaml. */
export const CardQuery = (operationId: string) => new CardQueryPipe(operationId);

@Injectable()
class CardIdPipe implements PipeTransform {
  transform(value: unknown, metadata: { data?: string }): string {
    if (typeof value !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(value))
      throw new ValidationFailedException(
        [{ field: metadata.data ?? 'id', reason: 'must be 1 to 64 letters, digits, _ or -' }],
        'request path',
      );
    return value;
  }
}

/** `@Param('paymentId', CardId)`. */
export const CardId = new CardIdPipe();

/** An answer of the provider (snake_case) as the facade gives it (camelCase), per its card.yaml schema. */
export const facade = <T>(schema: string, value: T): Record<string, unknown> =>
  CARD.toFacade(schema, value) as Record<string, unknown>;
