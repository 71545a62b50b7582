import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Psd2Role } from '../qwac/qwac-reader.js';

/** openapi/psd2.yaml: the upstream open-banking contract, the source of truth for both the sandbox and the gateway. */
export const PSD2_SPEC_FILE = fileURLToPath(
  new URL('../../../openapi/upstream/psd2.yaml', import.meta.url),
);

type Schema = Record<string, unknown>;

interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: Schema;
}

export interface ContractOperation {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** OpenAPI path template, e.g. `/{brandId}/bg/v1/consents/{consentId}`. */
  path: string;
  parameters: ParameterObject[];
  requestBodySchema?: Schema;
  /** Response schemas by status code, for validating answers. */
  responseSchemas: Record<string, Schema | undefined>;
}

export interface ProductRule {
  aliases: string[];
  currencies?: string[];
  required: string[];
  schema?: Schema;
}

export type ProductRules = Record<string, ProductRule>;

export interface FieldProblem {
  /** Where: `body.creditorAgent`, `header.Consent-ID`, `query.dateFrom`, `path.brandId`. */
  path: string;
  message: string;
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

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

/** The contract, parsed once: operations, validators derived from its schemas, product rules and role rules. */
export class Psd2Contract {
  readonly document: Schema;
  readonly operations: ContractOperation[];
  readonly productRules: ProductRules;
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(text: string = readFileSync(PSD2_SPEC_FILE, 'utf8')) {
    this.document = parse(text) as Schema;
    this.ajv = addFormats(new Ajv({ strict: false, allErrors: true, discriminator: true }));
    this.ajv.addSchema(this.document, 'psd2');
    this.operations = this.readOperations();
    const paymentDetails = (this.document.components as { schemas: Record<string, Schema> }).schemas
      .PaymentDetails;
    const { notes: _notes, ...rules } = paymentDetails['x-portico-product-rules'] as Record<
      string,
      unknown
    >;
    this.productRules = rules as ProductRules;
  }

  operation(operationId: string): ContractOperation {
    const found = this.operations.find((operation) => operation.operationId === operationId);
    if (!found) throw new Error(`psd2.yaml has no operation ${operationId}`);
    return found;
  }

  /** The product's canonical name, accepting the spellings the contract lists as aliases. */
  canonicalProduct(product: string): string | undefined {
    return Object.entries(this.productRules).find(
      ([name, rule]) => name === product || rule.aliases.includes(product),
    )?.[0];
  }

  /** The PSD2 role an upstream path needs (`x-portico-mtls.roles`); undefined = any PSD2 role. */
  roleForPath(path: string): Psd2Role | undefined {
    const roles = (this.document['x-portico-mtls'] as { roles: Record<string, string> }).roles;
    for (const [template, role] of Object.entries(roles)) {
      const prefix = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}(/|$)`);
      if (prefix.test(path) && /^PSP_/.test(role)) return role as Psd2Role;
    }
    return undefined;
  }

  /** Validates a value against a schema of the contract (a `$ref`-able schema object). */
  validate(schema: Schema, value: unknown, prefix: string): FieldProblem[] {
    const key = JSON.stringify(schema);
    let validator = this.validators.get(key);
    if (!validator) {
      validator = this.ajv.compile(this.resolveRefs(schema));
      this.validators.set(key, validator);
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
      if (parameter.schema) problems.push(...this.validate(parameter.schema, value, label));
    }
    if (operation.requestBodySchema) {
      if (request.body === undefined || request.body === null)
        problems.push({ path: 'body', message: 'is required' });
      else problems.push(...this.validate(operation.requestBodySchema, request.body, 'body'));
    }
    return problems;
  }

  /** Turns local `#/components/...` refs into refs into the registered document. */
  private resolveRefs(schema: Schema): Schema {
    return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"psd2#/')) as Schema;
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
          requestBodySchema: (
            requestBody as { content?: Record<string, { schema?: Schema }> } | undefined
          )?.content?.['application/json']?.schema,
          responseSchemas: Object.fromEntries(
            Object.entries(responses).map(([status, response]) => [
              status,
              (this.deref(response as Schema) as { content?: Record<string, { schema?: Schema }> })
                .content?.['application/json']?.schema,
            ]),
          ),
        });
      }
    }
    return operations;
  }
}
