import { applyDecorators, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiBody, ApiParam, ApiQuery, ApiResponse, type HeadersObject } from '@nestjs/swagger';
import type { components } from '#src/generated/pos.js';
import { ApiProblems } from '#src/platform/errors/api-problem-responses.js';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';
import type { Camelized } from '#src/platform/openapi/camel-case-schemas.js';
import type { Schema } from '#src/shared/contracts/openapi-contract.js';
import type {
  PosOperation,
  PosQueryOf,
  PosTransactionRequest,
} from '#src/upstreams/pos/pos.client.js';
import { POS, posContract } from '#src/upstreams/pos/pos-schemas.js';
import { UPSTREAM_PROBLEMS } from '#src/platform/errors/upstream-problems.js';

type PosSchemas = components['schemas'];

/** What every POS operation may answer besides its own outcome. */
export const ApiPosProblems = (extra: Record<number, string> = {}) =>
  ApiProblems({
    ...UPSTREAM_PROBLEMS,
    403: "The provider refused the tenant: the terminal or transaction is not its merchant's, or its POS key is not valid (`upstream.code` 10002 / 10005)",
    409: 'The tenant has no POS key (an operator sets it), or the terminal is not connected (`upstream.code` 10006)',
    ...extra,
  });

/** An answer documented as the camelCase form of a pos.yaml schema. */
export const ApiPosAnswer = (
  status: number,
  schema: string,
  description: string,
  headers?: HeadersObject,
) =>
  ApiResponse({
    status,
    description,
    schema: POS.ref(schema),
    ...(headers ? { headers } : {}),
  });

export const ApiPosBody = (schema: string, example: Record<string, unknown>) =>
  ApiBody({ required: true, schema: { allOf: [POS.ref(schema)], example } });

const queryParameters = (operationId: string) =>
  posContract.operation(operationId).parameters.filter((parameter) => parameter.in === 'query');

/** The query arguments of a POS list, documented with pos.yaml's schemas. */
export function ApiPosQuery(operationId: string): MethodDecorator {
  return applyDecorators(
    ...queryParameters(operationId).map((parameter) =>
      ApiQuery({
        name: parameter.name,
        required: false,
        schema: withoutExtensions(POS.resolveSchema(parameter.schema ?? {})),
        description: (parameter as { description?: string }).description,
      }),
    ),
  );
}

function withoutExtensions(schema: Schema): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => !key.startsWith('x-')));
}

@Injectable()
class PosQueryPipe<O extends PosOperation> implements PipeTransform {
  constructor(private readonly operationId: O) {}

  transform(query: unknown): PosQueryOf<O> {
    const input = (query ?? {}) as Record<string, unknown>;
    const parameters = queryParameters(this.operationId);
    const out: Record<string, string | number> = {};
    const errors: { field: string; reason: string }[] = [];
    for (const [name, raw] of Object.entries(input)) {
      const parameter = parameters.find((p) => p.name === name);
      if (!parameter || typeof raw !== 'string') {
        errors.push({
          field: name,
          reason: `${name} is not an argument of this list, or given twice`,
        });
        continue;
      }
      const schema = POS.resolveSchema(parameter.schema ?? {});
      const value = schema.type === 'integer' && /^-?\d{1,9}$/.test(raw) ? Number(raw) : raw;
      const problems = posContract.validate(parameter.schema ?? {}, value, '');
      if (problems.length)
        errors.push({
          field: name,
          reason: problems.map((p) => `${name} ${p.message}`).join('; '),
        });
      else out[name] = value;
    }
    if (errors.length) throw new ValidationFailedException(errors, 'request query');
    // Each argument valid against its pos.yaml parameter.
    return out as PosQueryOf<O>;
  }
}

/** `@Query(PosQuery('listPosTerminals'))`: the query as the provider's arguments, checked by pos.yaml. */
export type { PosQueryOf };

export const PosQuery = <O extends PosOperation>(operationId: O) => new PosQueryPipe(operationId);

@Injectable()
class PosPathPipe implements PipeTransform {
  constructor(private readonly schema: string) {}

  transform(value: unknown, metadata: { data?: string }): string {
    const problems = posContract.validate(
      { $ref: `#/components/schemas/${this.schema}` },
      value,
      '',
    );
    if (typeof value !== 'string' || problems.length)
      throw new ValidationFailedException(
        [{ field: metadata.data ?? 'id', reason: problems[0]?.message ?? 'is invalid' }],
        'request path',
      );
    return value;
  }
}

/** `@Param('transactionId', PosPath('PosTransactionId'))`: a path id checked by its pos.yaml schema. */
export const PosPath = (schema: string) => new PosPathPipe(schema);

@Injectable()
class PosBodyPipe implements PipeTransform {
  transform(body: unknown): PosTransactionRequest {
    const input = body === undefined || body === null ? {} : body;
    if (typeof input !== 'object' || Array.isArray(input))
      throw new ValidationFailedException([{ field: 'body', reason: 'must be a JSON object' }]);
    const { value, problems } = POS.check('PosTransactionRequest', input);
    const keyLimit = posContract.schemas.PosMetadata['x-portico-key-max-length'] as number;
    const metadata = (input as { metadata?: unknown }).metadata;
    if (metadata && typeof metadata === 'object')
      for (const key of Object.keys(metadata))
        if (key.length > keyLimit)
          problems.push({
            path: `metadata.${key}`,
            message: `key must NOT have more than ${keyLimit} characters`,
          });
    if (problems.length) {
      const byField = new Map<string, string[]>();
      for (const problem of problems) {
        const field = problem.path || 'body';
        byField.set(field, [...(byField.get(field) ?? []), problem.message]);
      }
      throw new ValidationFailedException(
        [...byField].map(([field, reasons]) => ({ field, reason: reasons.join('; ') })),
      );
    }
    // Valid against pos.yaml's PosTransactionRequest.
    return value as PosTransactionRequest;
  }
}

/** `@Body(PosBody)`: a payment or void (camelCase) checked by pos.yaml, as the provider's JSON. */
export const PosBody = new PosBodyPipe();

/** A provider answer (snake_case) as the facade gives it (camelCase), per its pos.yaml schema. */
export const posFacade = <S extends keyof PosSchemas, V extends PosSchemas[S]>(
  schema: S,
  value: V,
) =>
  // toFacade renames what Camelized renames: the schema's declared properties, at every depth.
  POS.toFacade(schema, value) as Camelized<V>;

/** A path id documented with its pos.yaml schema. */
export const ApiPosPathParam = (name: string, schema: string, description: string) =>
  ApiParam({
    name,
    description,
    schema: withoutExtensions(POS.resolveSchema({ $ref: `#/components/schemas/${schema}` })),
  });
