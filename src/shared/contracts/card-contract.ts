import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenApiContract, type ContractOperation, type Schema } from './openapi-contract.js';

/** openapi/upstream/card.yaml: the upstream card contract, the source of truth for both the sandbox and the gateway. */
export const CARD_SPEC_FILE = fileURLToPath(
  new URL('../../../openapi/upstream/card.yaml', import.meta.url),
);

/** The code a refusal of a parameter carries when its schema names none. */
export const INVALID_PARAMETER = 80002;
/** The code of a parameter the operation does not take. */
export const UNSUPPORTED_PARAMETER = 80001;

/**
 * The card contract, with what it adds to OpenAPI: the error code each request field's refusal
 * carries (`x-portico-error-code`), the catalogue of messages (`x-portico-error-catalogue`), the
 * operations a public key may call (`x-portico-public-key`) and metadata's key length
 * (`x-portico-key-max-length`). Requests (form bodies, queries) are validated with text coerced to
 * the schema's types.
 */
export class CardContract extends OpenApiContract {
  private static committedOne?: CardContract;

  /**
   * The committed spec's contract, parsed and compiled once per process: it never changes, and a test
   * run starts a sandbox for each of its gateways (about a second of parsing and schema compiling each).
   */
  static committed(): CardContract {
    return (CardContract.committedOne ??= new CardContract());
  }

  private readonly messages: Record<string, string>;
  /** The body properties of each operation, collected once (the contract never changes). */
  private readonly bodyPropertiesOf = new WeakMap<ContractOperation, Record<string, Schema>>();
  /** What each `$ref` names, looked up once. */
  private readonly refTargets = new Map<string, Schema>();

  constructor(text: string = readFileSync(CARD_SPEC_FILE, 'utf8')) {
    super('card', text, { coerceRequests: true });
    this.messages = (
      this.document['x-portico-error-catalogue'] as { messages: Record<string, string> }
    ).messages;
  }

  /** The catalogue message of `code`, its `%s`/`%d` filled in order with `values`. */
  message(code: number, ...values: (string | number)[]): string {
    const template = this.messages[String(code)] ?? 'Unexpected error.';
    let index = 0;
    return template.replace(/%[sd]/g, () => String(values[index++] ?? ''));
  }

  /** Whether a public (`pk_`) key may call the operation. */
  allowsPublicKey(operationId: string): boolean {
    return this.rawOperation(operationId)['x-portico-public-key'] === true;
  }

  /** Whether the provider answers the operation's path with a trailing slash too. */
  takesTrailingSlash(operationId: string): boolean {
    return this.rawOperation(operationId)['x-portico-trailing-slash'] === true;
  }

  /** The body field carrying the (public) key of an operation called without Authorization. */
  keyInBodyOf(operationId: string): string | undefined {
    return this.rawOperation(operationId)['x-portico-key-in-body'] as string | undefined;
  }

  /** The error code of a refused body field (its own, or the schema it refers to), else 80002. */
  errorCodeOf(operation: ContractOperation, field: string): number {
    const property = this.bodyProperty(operation, field);
    return this.extension<number>(property, 'x-portico-error-code') ?? INVALID_PARAMETER;
  }

  /** The longest metadata key a body field takes, when the field is metadata. */
  keyMaxLengthOf(operation: ContractOperation, field: string): number | undefined {
    return this.extension<number>(this.bodyProperty(operation, field), 'x-portico-key-max-length');
  }

  /** Whether a body field is a list (`a[]=x`, `a[0]=x` in a form). */
  isListField(operation: ContractOperation, field: string): boolean {
    const property = this.bodyProperty(operation, field);
    return property !== undefined && this.resolve(property).type === 'array';
  }

  /** The names of the body fields the operation takes. */
  bodyFields(operation: ContractOperation): string[] {
    return Object.keys(this.bodyProperties(operation));
  }

  private bodyProperty(operation: ContractOperation, field: string): Schema | undefined {
    return this.bodyProperties(operation)[field];
  }

  /** The properties of a request body, those of its `allOf` parts included (a form extending another). */
  private bodyProperties(operation: ContractOperation): Record<string, Schema> {
    if (!operation.requestBodySchema) return {};
    let properties = this.bodyPropertiesOf.get(operation);
    if (!properties) {
      properties = this.collectBodyProperties(operation.requestBodySchema);
      this.bodyPropertiesOf.set(operation, properties);
    }
    return properties;
  }

  private collectBodyProperties(body: Schema): Record<string, Schema> {
    const collect = (schema: Schema): Record<string, Schema> => {
      const resolved = this.resolve(schema);
      return Object.assign(
        {},
        ...((resolved.allOf as Schema[] | undefined) ?? []).map(collect),
        (resolved.properties as Record<string, Schema> | undefined) ?? {},
      ) as Record<string, Schema>;
    };
    return collect(body);
  }

  /** An extension on a schema, on the schema its `$ref` names, or on any `allOf`/`oneOf` part. */
  private extension<T>(schema: Schema | undefined, name: string): T | undefined {
    if (!schema) return undefined;
    if (name in schema) return schema[name] as T;
    if (typeof schema.$ref === 'string') return this.extension(this.resolve(schema), name);
    for (const part of [
      ...((schema.allOf as Schema[]) ?? []),
      ...((schema.oneOf as Schema[]) ?? []),
    ]) {
      const found = this.extension<T>(part, name);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  private resolve(schema: Schema): Schema {
    let current = schema;
    while (typeof current.$ref === 'string') {
      const ref = current.$ref;
      let target = this.refTargets.get(ref);
      if (!target) {
        const path = ref.replace(/^#\//, '').split('/');
        target = path.reduce<Schema>((node, key) => node[key] as Schema, this.document);
        this.refTargets.set(ref, target);
      }
      current = target;
    }
    return current;
  }

  private rawOperation(operationId: string): Schema {
    const { path, method } = this.operation(operationId);
    return ((this.document.paths as Record<string, Schema>)[path] as Record<string, Schema>)[
      method.toLowerCase()
    ];
  }
}
