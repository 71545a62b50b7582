import type {
  ExampleObject,
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ReferenceObject,
  SchemaObject,
} from '@nestjs/swagger';
import { UPSTREAM_PROBLEM_TYPES } from '../errors/upstream-problems.js';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES, statusTitle } from '../errors/problem.js';
import { problemTitle } from '../errors/problem-titles.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_PROBLEM_TYPES,
} from '../idempotency/idempotency-problems.js';

/** The request id every example shows (the Problem schema's own example). */
const EXAMPLE_REQUEST_ID = '2f3c1a8e-4a55-4a43-9c1e-8f2b2f6d9a10';
const EXAMPLE_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const EXAMPLE_UUID = '7d3e0a52-5b7a-4e0c-9d55-1a2b3c4d5e6f';
/** The upstream status a 502 example shows. */
const EXAMPLE_UPSTREAM_STATUS = 503;
/** A Berlin Group code named in a description, e.g. `CONSENT_EXPIRED`. */
const CODE = /\b[A-Z]+(?:_[A-Z]+)+\b/;

/**
 * The type and title Portico answers with for a status, when the description names no code. Statuses
 * answered by one cause only carry that cause's type: 410 is the spent SCA return address, 422 and 503 are
 * the idempotency store's.
 */
const BY_STATUS: Record<number, { type: string; title: string }> = {
  401: { type: PROBLEM_TYPES.unauthenticated, title: 'Unauthorized' },
  403: { type: PROBLEM_TYPES.forbidden, title: 'Forbidden' },
  404: { type: PROBLEM_TYPES.notFound, title: 'Not Found' },
  409: { type: PROBLEM_TYPES.conflict, title: 'Conflict' },
  410: { type: 'urn:portico:problem:sca-state-gone', title: 'Gone' },
  413: { type: PROBLEM_TYPES.bodyTooLarge, title: 'Payload Too Large' },
  415: { type: PROBLEM_TYPES.unsupportedMediaType, title: 'Unsupported Media Type' },
  422: { type: IDEMPOTENCY_PROBLEM_TYPES.keyReused, title: 'Idempotency key reused' },
  429: { type: PROBLEM_TYPES.rateLimited, title: 'Too Many Requests' },
  503: { type: IDEMPOTENCY_PROBLEM_TYPES.unavailable, title: 'Service Unavailable' },
};

interface OperationContext {
  document: OpenAPIObject;
  path: string;
  operation: OperationObject;
}

const isReference = (value: unknown): value is ReferenceObject =>
  typeof value === 'object' && value !== null && '$ref' in value;

/** Text for a problem's detail: the description without Markdown code marks. */
const plain = (text: string) => text.replace(/`/g, '').trim();

function parameters(context: OperationContext): ParameterObject[] {
  return (context.operation.parameters ?? []).filter(
    (parameter): parameter is ParameterObject => !isReference(parameter),
  );
}

function schemaOf(context: OperationContext, schema: SchemaObject | ReferenceObject | undefined) {
  if (!schema) return undefined;
  if (!isReference(schema)) return schema;
  const name = schema.$ref.split('/').pop() ?? '';
  const found = context.document.components?.schemas?.[name];
  return found && !isReference(found) ? found : undefined;
}

/** The request path with each path parameter filled in, as `instance` shows it. */
function instanceOf(context: OperationContext): string {
  const byName = new Map(parameters(context).map((parameter) => [parameter.name, parameter]));
  return context.path.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const schema = schemaOf(context, byName.get(name)?.schema);
    if (typeof schema?.example === 'string') return schema.example;
    return schema?.format === 'uuid' ? EXAMPLE_UUID : `example-${name}`;
  });
}

/** Why a missing (or a malformed) value is refused, as the validation pipe words it. */
function reasonFor(name: string, schema: SchemaObject | undefined, malformed = false): string {
  if (schema?.enum) return `${name} must be one of the following values: ${schema.enum.join(', ')}`;
  if (schema?.format === 'uuid') return `${name} must be a UUID`;
  if (malformed && schema?.pattern) return `${name} must match /${schema.pattern}/`;
  if (schema?.type === 'string') return `${name} must be a string`;
  if (schema?.type === 'boolean') return `${name} must be a boolean value`;
  if (schema?.type === 'number' || schema?.type === 'integer') return `${name} must be a number`;
  return 'must be object';
}

/**
 * One invalid field of this operation: a required body field, else a required header, else a path or
 * required query parameter (optional ones are not always validated).
 */
function invalidField(
  context: OperationContext,
): { where: string; field: string; reason: string } | undefined {
  const body = context.operation.requestBody;
  let bodySchema = schemaOf(
    context,
    body && !isReference(body) ? body.content['application/json']?.schema : undefined,
  );
  // A body documented as an upstream schema (`allOf: [$ref]`, the card API's; a web-wallet tokenisation
  // adds Portico's own fields in a second part) is that schema.
  // An upstream schema may itself narrow another (`allOf` plus `required`): its required fields count.
  const requiredFields: string[] = [];
  while (bodySchema?.allOf?.length) {
    requiredFields.push(...(bodySchema.required ?? []));
    bodySchema = schemaOf(context, bodySchema.allOf[0]);
  }
  // A body of several kinds (`oneOf`, the POS interface's payment or void): its first kind.
  if (bodySchema?.oneOf?.length) bodySchema = schemaOf(context, bodySchema.oneOf[0]);
  // A required field missing, else (a body of optional fields only) the first field malformed.
  const [required] = [...requiredFields, ...(bodySchema?.required ?? [])];
  const first = required ?? Object.keys(bodySchema?.properties ?? {})[0];
  if (bodySchema && first) {
    const property = bodySchema.properties?.[first];
    return {
      where: 'request body',
      field: first,
      reason: reasonFor(first, schemaOf(context, property), required === undefined),
    };
  }
  const all = parameters(context);
  const header = all.find((parameter) => parameter.in === 'header' && parameter.required);
  if (header)
    return {
      where: 'request headers',
      field: `header:${header.name}`,
      reason: `${header.name} is required`,
    };
  const parameter =
    all.find((candidate) => candidate.in === 'path') ??
    all.find((candidate) => candidate.in === 'query' && candidate.required);
  if (parameter)
    return {
      where: `request ${parameter.in === 'path' ? 'path' : 'query'}`,
      field: parameter.name,
      reason: reasonFor(parameter.name, schemaOf(context, parameter.schema), true),
    };
  return undefined;
}

/**
 * The problem+json body Portico answers with for this status, written from the response's description:
 * the status decides the type and title (or the Berlin Group code the description names), the description
 * becomes the detail; 400 lists an invalid field of the operation, 502 and 504 carry `upstream`.
 */
export function problemExample(
  status: number,
  description: string,
  context: OperationContext,
): Record<string, unknown> {
  const example = exampleOf(status, description, context);
  // Titled by the registry, as an answer is.
  return { ...example, title: problemTitle(example.type as string, status) };
}

function exampleOf(
  status: number,
  description: string,
  context: OperationContext,
): Record<string, unknown> {
  const base = {
    status,
    instance: instanceOf(context),
    requestId: EXAMPLE_REQUEST_ID,
    traceId: EXAMPLE_TRACE_ID,
  };
  const operationId = context.operation.operationId ?? 'the operation';
  if (status === 400) {
    const invalid = invalidField(context);
    const validation = { type: PROBLEM_TYPES.validation, title: 'Validation failed', ...base };
    // An operation without input can only be sent malformed: no field to name.
    if (!invalid) return { ...validation, detail: plain(description) };
    return {
      ...validation,
      detail: `The ${invalid.where} has 1 invalid field: ${invalid.field}`,
      errors: [{ field: invalid.field, reason: invalid.reason }],
    };
  }
  if (status === 500)
    return { type: PROBLEM_TYPES.internal, title: 'Internal Server Error', ...base };
  if (status === 502)
    return {
      type: UPSTREAM_PROBLEM_TYPES.badGateway,
      title: 'Bad Gateway',
      ...base,
      detail: `The bank answered ${EXAMPLE_UPSTREAM_STATUS} to ${operationId}`,
      upstream: { status: EXAMPLE_UPSTREAM_STATUS },
    };
  if (status === 504)
    return {
      type: UPSTREAM_PROBLEM_TYPES.timeout,
      title: 'Gateway Timeout',
      ...base,
      detail: `The bank did not answer ${operationId} in time`,
      upstream: { failure: 'timeout' },
    };
  const code = CODE.exec(description)?.[0];
  const detail = plain(description);
  if (code && status === 404)
    // An unknown consent is an ordinary not-found, with the Berlin Group code beside it.
    return { ...BY_STATUS[404], ...base, detail, code };
  if (code)
    return {
      type: `urn:portico:problem:consent:${code.toLowerCase().replace(/_/g, '-')}`,
      title: code,
      ...base,
      detail,
      code,
    };
  if (status === 409 && description.includes(IDEMPOTENCY_KEY_HEADER))
    return {
      type: IDEMPOTENCY_PROBLEM_TYPES.inProgress,
      title: 'Request in progress',
      ...base,
      detail,
    };
  const known = BY_STATUS[status] ?? { type: 'about:blank', title: statusTitle(status) };
  return { ...known, ...base, detail };
}

/** A short key for an example: its code (`consentExpired`) or the last part of its type (`rateLimited`). */
function exampleKey(example: Record<string, unknown>): string {
  const source =
    typeof example.code === 'string'
      ? example.code.toLowerCase()
      : String(example.type).split(':').pop()!;
  return source.replace(/[-_]+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * Gives every problem+json response of every operation an example per cause. Several decorators may
 * document one status (the API-key guard's 401 and a consent's 401); @nestjs/swagger joins their
 * descriptions with a blank line, so each paragraph is a cause with its own example.
 */
export function documentProblemExamples(document: OpenAPIObject): void {
  for (const [path, pathItem] of Object.entries(document.paths)) {
    for (const operation of [
      pathItem.get,
      pathItem.put,
      pathItem.post,
      pathItem.delete,
      pathItem.patch,
    ]) {
      if (!operation) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        const media = response && !isReference(response) ? response.content : undefined;
        const problem = media?.[PROBLEM_CONTENT_TYPE];
        if (!problem || isReference(response) || !response) continue;
        const examples: Record<string, ExampleObject> = {};
        for (const cause of response.description.split(/\n\n+/).filter(Boolean)) {
          const value = problemExample(Number(status), cause, { document, path, operation });
          let key = exampleKey(value);
          for (let n = 2; key in examples; n++) key = `${exampleKey(value)}${n}`;
          examples[key] = { summary: plain(cause), value };
        }
        // One decorator's response object is shared by every operation it documents: replace, never mutate.
        operation.responses[status] = {
          ...response,
          content: { ...media, [PROBLEM_CONTENT_TYPE]: { ...problem, examples } },
        };
      }
    }
  }
}
