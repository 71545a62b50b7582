import { applyDecorators, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { components } from '#src/generated/card.js';
import { ApiProblems } from '#src/platform/errors/api-problem-responses.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import { camelCase, type Camelized } from '#src/platform/openapi/camel-case-schemas.js';
import type { Schema } from '#src/shared/contracts/openapi-contract.js';
import type { CardOperation, CardQueryOf } from '#src/upstreams/card/card.client.js';
import { CARD, cardContract } from '#src/upstreams/card/card-schemas.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';
import type { CardSchemaName } from './card-body.pipe.js';

type CardSchemas = components['schemas'];

/** What every card operation may answer besides its own outcome. */
export const ApiCardProblems = (extra: Record<number, string> = {}) =>
  ApiProblems({
    ...UPSTREAM_PROBLEMS,
    409: 'The tenant has no card merchant keys yet (an operator sets them), or the provider refused the request as conflicting (`upstream.code`, e.g. 40025 duplicate merchantRef)',
    ...extra,
  });

/** The request body, documented as the camelCase form of a card.yaml request schema. */
function ApiCardBody(schema: string, example?: Record<string, unknown>): MethodDecorator {
  return ApiBody({
    required: true,
    schema: { allOf: [CARD.ref(schema)], ...(example ? { example } : {}) },
  });
}

/** An answer documented as the camelCase form of a card.yaml answer schema. */
function ApiCardAnswer(status: number, schema: string, description: string): MethodDecorator {
  return ApiResponse({ status, description, schema: CARD.ref(schema) });
}

const queryParameters = (operationId: string) =>
  cardContract
    .operation(operationId)
    .parameters.filter((parameter) => parameter.in === 'query')
    .map((parameter) => ({ ...parameter, facadeName: camelCase(parameter.name) }));

/** The query arguments of a card list operation, documented with card.yaml's schemas in camelCase. */
function ApiCardQuery(operationId: string): MethodDecorator {
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

/** The card.yaml schema of a provider path parameter (`paymentId`, `customerId`, …): the facade's bound. */
function pathIdSchema(upstreamName: string): Schema {
  const parameter = cardContract.operations
    .flatMap((operation) => operation.parameters)
    .find((candidate) => candidate.in === 'path' && candidate.name === upstreamName);
  if (!parameter?.schema) throw new Error(`card.yaml has no path parameter ${upstreamName}`);
  return parameter.schema;
}

/** Path ids that also take Portico's id of a resource whose creation is in doubt. */
const BY_PORTICO_ID = new Set(['paymentId', 'refundId', 'customerId', 'notificationId']);

/**
 * A provider id in a path (`pmt_…`), or Portico's id of a write in doubt (a UUID), documented as card.yaml
 * documents that parameter; `upstreamName` when the facade names it otherwise (`id` of a card token).
 */
function ApiCardId(name: string, what: string, upstreamName = name): MethodDecorator {
  return ApiParam({
    name,
    description: `The ${what}'s id at the provider${BY_PORTICO_ID.has(name) ? ", or Portico's id of one whose creation is in doubt" : ''}`,
    schema: withoutExtensions(CARD.resolveSchema(pathIdSchema(upstreamName))),
  });
}

/** `[name, what, upstreamName?]` of a provider id in the path, as `ApiCardId` takes them. */
export type CardRouteId = readonly [name: string, what: string, upstreamName?: string];

export interface CardRouteDocs {
  summary: string;
  description: string;
  /** One path id, or several in path order. */
  id?: CardRouteId | readonly CardRouteId[];
  body?: readonly [schema: string, example?: Record<string, unknown>];
  /** The card.yaml list operation whose query arguments this route takes. */
  query?: string;
  answer: readonly [status: number, schema: string, description: string];
  problems?: Record<number, string>;
}

const isIdList = (id: CardRouteId | readonly CardRouteId[]): id is readonly CardRouteId[] =>
  Array.isArray(id[0]);

/**
 * The documentation of a card route in one decorator: operation, path ids, body or query, answer, problems.
 * Documentation only: the verb, `@HttpCode` and `@Idempotent()` stay on the method, where behaviour is read.
 */
export function CardRoute(docs: CardRouteDocs): MethodDecorator {
  const ids = docs.id ? (isIdList(docs.id) ? docs.id : [docs.id]) : [];
  const stack: MethodDecorator[] = [
    ApiOperation({ summary: docs.summary, description: docs.description }),
    ...ids.map(([name, what, upstreamName]) => ApiCardId(name, what, upstreamName)),
    ...(docs.body ? [ApiCardBody(...docs.body)] : []),
    ...(docs.query ? [ApiCardQuery(docs.query)] : []),
    ApiCardAnswer(...docs.answer),
    ...(docs.problems ? [ApiProblems(docs.problems)] : []),
  ];
  // Applied bottom-up, as the same decorators stacked in this order would be: the spec keeps its order.
  return applyDecorators(...stack.reverse());
}

@Injectable()
class CardQueryPipe<O extends CardOperation> implements PipeTransform {
  constructor(private readonly operationId: O) {}

  transform(query: unknown): CardQueryOf<O> {
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
    // Each argument valid against its card.yaml parameter, under its card.yaml name.
    return out as CardQueryOf<O>;
  }
}

export type { CardQueryOf };

/** `@Query(CardQuery('listPayments'))`: the query as the provider's arguments, checked by card.yaml. */
export const CardQuery = <O extends CardOperation>(operationId: O) =>
  new CardQueryPipe(operationId);

@Injectable()
class CardIdPipe implements PipeTransform {
  constructor(private readonly upstreamName?: string) {}

  transform(value: unknown, metadata: { data?: string }): string {
    const field = metadata.data ?? 'id';
    const problems = cardContract.validate(pathIdSchema(this.upstreamName ?? field), value, '');
    if (typeof value !== 'string' || problems.length)
      throw new ValidationFailedException(
        [
          {
            field,
            reason: `${field} ${problems.map((p) => p.message).join('; ') || 'is invalid'}`,
          },
        ],
        'request path',
      );
    return value;
  }
}

/** `@Param('paymentId', CardId)`: checked by card.yaml's schema of the path parameter of that name. */
export const CardId = new CardIdPipe();

/** `@Param('id', CardIdOf('tokenId'))`: the same, for a facade parameter named otherwise. */
export const CardIdOf = (upstreamName: string) => new CardIdPipe(upstreamName);

/** An answer of the provider (snake_case) as the facade gives it (camelCase), per its card.yaml schema. */
export const facade = <S extends CardSchemaName, V extends CardSchemas[S] | null>(
  schema: S,
  value: V,
) =>
  // toFacade renames what Camelized renames: the schema's declared properties, at every depth.
  CARD.toFacade(schema, value) as Camelized<V>;
