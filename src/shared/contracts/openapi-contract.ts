import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { load } from 'js-yaml';

export type Schema = Record<string, unknown>;

interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

/** A header an answer declares (`responses.<status>.headers`), resolved. */
export interface ResponseHeader {
  name: string;
  required: boolean;
  schema?: Schema;
}

export interface ContractOperation {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI path template, e.g. `/{brandId}/bg/v1/consents/{consentId}`. */
  path: string;
  parameters: ParameterObject[];
  requestBodySchema?: Schema;
  /** The media type of the request body (`application/json`, `application/x-www-form-urlencoded`). */
  requestBodyType?: string;
  /** Response schemas by status code, for validating answers. */
  responseSchemas: Record<string, Schema | undefined>;
  /** Declared response headers by status code. */
  responseHeaders: Record<string, ResponseHeader[]>;
}

/** Header values arrive as text; a numeric schema (Retry-After) is checked against the number. */
function headerValue(schema: Schema | undefined, value: string): unknown {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value))
    return Number(value);
  return value;
}

export interface FieldProblem {
  /** Where: `body.creditorAgent`, `header.Consent-ID`, `query.dateFrom`, `path.brandId`. */
  path: string;
  message: string;
}

// ajv-formats is CommonJS: its module object is the plugin, and carries itself as `default` too.
const addFormats = addFormatsModule.default;

function problemsOf(errors: ErrorObject[] | null | undefined, prefix: string): FieldProblem[] {
  return (errors ?? []).map((error) => {
    const pointer = error.instancePath
      .split('/')
      .filter(Boolean)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
      .join('');
    const missing =
      error.keyword === 'required'
        ? `.${(error.params as { missingProperty: string }).missingProperty}`
        : '';
    const extra =
      error.keyword === 'additionalProperties'
        ? `.${(error.params as { additionalProperty: string }).additionalProperty}`
        : '';
    const field = `${prefix}${pointer}${missing}${extra}`;
    const message =
      error.keyword === 'additionalProperties' ? 'is not allowed' : (error.message ?? 'is invalid');
    return { path: field, message };
  });
}

/**
 * OpenAPI 3.0 spells "this schema or null" as `nullable: true` beside an `allOf` of a `$ref`; JSON
 * Schema checks the allOf against null too. For the validator it becomes anyOf(schema, null).
 */
function nullableAllOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(nullableAllOf);
  if (!node || typeof node !== 'object') return node;
  const copy = Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, nullableAllOf(value)]),
  ) as Schema;
  if (copy.nullable !== true || !Array.isArray(copy.allOf)) return copy;
  const { nullable: _nullable, ...schema } = copy;
  return { anyOf: [schema, { enum: [null] }] };
}

/**
 * An upstream OpenAPI contract, parsed once: its operations, and validators derived from its schemas
 * for requests (the sandbox, the facade's bodies) and answers (the gateway checks what the provider says).
 */
export class OpenApiContract {
  readonly document: Schema;
  readonly operations: ContractOperation[];
  /** The operations by operationId, and by method and path template (looked up on every call). */
  private readonly byId = new Map<string, ContractOperation>();
  private readonly byRoute = new Map<string, ContractOperation>();
  private readonly ajv: Ajv;
  /** Validates requests, turning text into the numbers and booleans the schema wants (form bodies, queries). */
  private readonly requestAjv?: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly requestValidators = new Map<string, ValidateFunction>();
  private readonly compiled = new Map<Ajv, WeakMap<Schema, ValidateFunction>>();

  /**
   * `name` registers the document with ajv, and prefixes refs in validation messages. With
   * `coerceRequests`, request values arrive as text (form bodies, query strings) and are converted
   * in place to what their schema says before they are checked; answers are never coerced.
   */
  constructor(
    readonly name: string,
    text: string,
    options: { coerceRequests?: boolean } = {},
  ) {
    this.document = load(text) as Schema;
    // One copy of the document for both validators (ajv reads the schemas it is given, never writes them).
    const forValidation = nullableAllOf(this.document) as Schema;
    const ajv = (coerceTypes: boolean) => {
      const instance = addFormats(
        new Ajv({ strict: false, allErrors: true, discriminator: true, coerceTypes }),
      );
      instance.addSchema(forValidation, name);
      return instance;
    };
    this.ajv = ajv(false);
    if (options.coerceRequests) this.requestAjv = ajv(true);
    this.operations = this.readOperations();
    for (const operation of this.operations) {
      if (!this.byId.has(operation.operationId)) this.byId.set(operation.operationId, operation);
      const route = `${operation.method} ${operation.path}`;
      if (!this.byRoute.has(route)) this.byRoute.set(route, operation);
    }
  }

  /** The component schemas of the document. */
  get schemas(): Record<string, Schema> {
    return (this.document.components as { schemas: Record<string, Schema> }).schemas;
  }

  operation(operationId: string): ContractOperation {
    const found = this.byId.get(operationId);
    if (!found) throw new Error(`${this.name} has no operation ${operationId}`);
    return found;
  }

  /** Whether the operation is served by a host of its own (`servers` on its path), not the API's. */
  hasOwnServer(operationId: string): boolean {
    const { path } = this.operation(operationId);
    return Array.isArray((this.document.paths as Record<string, Schema>)[path].servers);
  }

  /** Validates a value against a schema of the contract (a `$ref`-able schema object). */
  validate(schema: Schema, value: unknown, prefix: string): FieldProblem[] {
    return this.check(this.ajv, this.validators, schema, value, prefix);
  }

  /**
   * Validates a request value; with `coerceRequests` text is converted in place first (so pass the
   * object that holds it: a whole body or query, not a bare string).
   */
  validateRequestValue(schema: Schema, value: unknown, prefix: string): FieldProblem[] {
    return this.requestAjv
      ? this.check(this.requestAjv, this.requestValidators, schema, value, prefix)
      : this.validate(schema, value, prefix);
  }

  private check(
    ajv: Ajv,
    cache: Map<string, ValidateFunction>,
    schema: Schema,
    value: unknown,
    prefix: string,
  ): FieldProblem[] {
    // The contract's own schema objects are found by identity; others (built per call) by their text.
    let validator = this.compiled.get(ajv)?.get(schema);
    if (!validator) {
      const key = JSON.stringify(schema);
      validator = cache.get(key);
      if (!validator) {
        validator = ajv.compile(this.resolveRefs(schema));
        cache.set(key, validator);
      }
      if (!this.compiled.has(ajv)) this.compiled.set(ajv, new WeakMap());
      this.compiled.get(ajv)!.set(schema, validator);
    }
    return validator(value) ? [] : problemsOf(validator.errors, prefix);
  }

  /** Checks path, query and header parameters and the body of a request against its operation. */
  validateRequest(
    operation: ContractOperation,
    request: {
      params: Record<string, string>;
      query: Record<string, unknown>;
      headers: Record<string, string | undefined>;
      body: unknown;
    },
  ): FieldProblem[] {
    const problems: FieldProblem[] = [];
    for (const parameter of operation.parameters) {
      const source =
        parameter.in === 'path'
          ? request.params
          : parameter.in === 'query'
            ? request.query
            : parameter.in === 'header'
              ? request.headers
              : {};
      const value =
        source[parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name];
      const label =
        parameter.in === 'header'
          ? `header.${parameter.name}`
          : `${parameter.in}.${parameter.name}`;
      if (value === undefined || value === '') {
        if (parameter.required) problems.push({ path: label, message: 'is required' });
        continue;
      }
      if (!parameter.schema) continue;
      if (this.requestAjv) {
        // Coerced in a holder object, so that the caller's query carries the converted value.
        const holder = { [parameter.name]: value };
        const found = this.validateRequestValue(
          { type: 'object', properties: { [parameter.name]: parameter.schema } },
          holder,
          parameter.in,
        );
        problems.push(
          ...found.map((p) => ({
            ...p,
            path: p.path.replace(/^[^.]+\./, `${label.split('.')[0]}.`),
          })),
        );
        if (found.length === 0 && parameter.in !== 'header')
          (source as Record<string, unknown>)[parameter.name] = holder[parameter.name];
      } else problems.push(...this.validate(parameter.schema, value, label));
    }
    if (operation.requestBodySchema) {
      if (request.body === undefined || request.body === null)
        problems.push({ path: 'body', message: 'is required' });
      else
        problems.push(
          ...this.validateRequestValue(operation.requestBodySchema, request.body, 'body'),
        );
    }
    return problems;
  }

  /** The operation at a method and OpenAPI path template (`/{brandId}/bg/v1/accounts`). */
  operationAt(method: string, path: string): ContractOperation | undefined {
    return this.byRoute.get(`${method.toUpperCase()} ${path}`);
  }

  /**
   * Checks an answer against the operation's declared responses: an undeclared status (with no
   * `default`), a declared required header that is missing, a header that breaks its schema, or a
   * body that breaks the declared schema (or is missing where one is declared) is a problem.
   * Header names are matched case-insensitively; undeclared headers are allowed.
   */
  validateResponse(
    operationId: string,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    body: unknown,
  ): FieldProblem[] {
    const operation = this.operation(operationId);
    const key = String(status);
    const declared =
      key in operation.responseSchemas
        ? key
        : `${key[0]}XX` in operation.responseSchemas
          ? `${key[0]}XX`
          : 'default' in operation.responseSchemas
            ? 'default'
            : undefined;
    if (!declared) return [{ path: 'status', message: `${status} is not a declared answer` }];
    const problems: FieldProblem[] = [];
    const declaredHeaders = operation.responseHeaders[declared] ?? [];
    const received =
      declaredHeaders.length === 0
        ? undefined
        : new Map(
            Object.entries(headers).map(([name, value]) => [
              name.toLowerCase(),
              Array.isArray(value) ? value.join(', ') : value,
            ]),
          );
    for (const header of declaredHeaders) {
      const value = received!.get(header.name.toLowerCase());
      const label = `header.${header.name}`;
      if (value === undefined || value === '') {
        if (header.required) problems.push({ path: label, message: 'is required' });
        continue;
      }
      if (header.schema)
        problems.push(...this.validate(header.schema, headerValue(header.schema, value), label));
    }
    const schema = operation.responseSchemas[declared];
    if (!schema) return problems;
    if (body === undefined) return [...problems, { path: 'body', message: 'is required' }];
    return [...problems, ...this.validate(schema, body, 'body')];
  }

  /** Turns local `#/components/...` refs into refs into the registered document. */
  private resolveRefs(schema: Schema): Schema {
    return JSON.parse(
      JSON.stringify(schema).replace(/"\$ref":"#\//g, `"$ref":"${this.name}#/`),
    ) as Schema;
  }

  private deref<T>(value: T | { $ref: string }): T {
    if (value && typeof value === 'object' && '$ref' in value) {
      const path = value.$ref.replace(/^#\//, '').split('/');
      return this.deref(
        path.reduce<unknown>(
          (node, key) =>
            (node as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')],
          this.document,
        ) as T,
      );
    }
    return value as T;
  }

  /** The body schema and its media type (JSON, or a form body), when the operation takes a body. */
  private requestBodyOf(
    requestBody: Schema | undefined,
  ): Pick<ContractOperation, 'requestBodySchema' | 'requestBodyType'> {
    const content = (requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)
      ?.content;
    for (const type of ['application/json', 'application/x-www-form-urlencoded'])
      if (content?.[type]?.schema)
        return { requestBodySchema: content[type].schema, requestBodyType: type };
    return {};
  }

  private headersOf(response: Schema): ResponseHeader[] {
    const headers = (response.headers ?? {}) as Record<string, unknown>;
    return Object.entries(headers).map(([name, header]) => {
      const resolved = this.deref(header as Schema) as { required?: boolean; schema?: Schema };
      return { name, required: resolved.required === true, schema: resolved.schema };
    });
  }

  private readOperations(): ContractOperation[] {
    const operations: ContractOperation[] = [];
    const paths = this.document.paths as Record<string, Record<string, unknown>>;
    for (const [path, item] of Object.entries(paths)) {
      const shared = ((item.parameters as unknown[]) ?? []).map((p) =>
        this.deref(p as ParameterObject),
      );
      for (const method of ['get', 'post', 'put', 'delete'] as const) {
        const operation = item[method] as Record<string, unknown> | undefined;
        if (!operation) continue;
        const own = ((operation.parameters as unknown[]) ?? []).map((p) =>
          this.deref(p as ParameterObject),
        );
        const requestBody = operation.requestBody
          ? this.deref(operation.requestBody as Schema)
          : undefined;
        const responses = operation.responses as Record<string, unknown>;
        operations.push({
          operationId: operation.operationId as string,
          method: method.toUpperCase() as ContractOperation['method'],
          path,
          parameters: [
            ...shared.filter((p) => !own.some((o) => o.name === p.name && o.in === p.in)),
            ...own,
          ],
          ...this.requestBodyOf(requestBody),
          responseSchemas: Object.fromEntries(
            Object.entries(responses).map(([status, response]) => [
              status,
              (this.deref(response as Schema) as { content?: Record<string, { schema?: Schema }> })
                .content?.['application/json']?.schema,
            ]),
          ),
          responseHeaders: Object.fromEntries(
            Object.entries(responses).map(([status, response]) => [
              status,
              this.headersOf(this.deref(response as Schema)),
            ]),
          ),
        });
      }
    }
    return operations;
  }
}
