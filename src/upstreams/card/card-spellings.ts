import type { OpenApiContract, Schema } from '#src/shared/contracts/openapi-contract.js';
import type { UpstreamAnswer } from '../http/upstream-caller.js';

interface RefusalSpelling {
  when: { status: number; code: number; messageContains?: string };
  as: { status: number; code: number };
}

/**
 * Reads the provider's answers in the seed's spelling, where card.yaml accepts two: a value listed in a
 * schema's `x-portico-spellings` (`Pre authorized` -> `Pre Authorized`) and a refusal listed in
 * `x-portico-refusal-spellings` (400 20005 -> 404 20005). The contract check sees the answer as sent;
 * everything after it (the store, status history, webhooks, the app) sees one spelling.
 */
export class CardSpellings {
  private readonly refusals: RefusalSpelling[];
  /** Whether a schema (or anything under it) carries spellings: answers are walked only where needed. */
  private readonly spelled = new WeakMap<Schema, boolean>();
  private readonly partsOf = new WeakMap<Schema, Schema[]>();

  constructor(private readonly contract: OpenApiContract) {
    this.refusals =
      (contract.document['x-portico-refusal-spellings'] as { spellings?: RefusalSpelling[] })
        ?.spellings ?? [];
  }

  /** The answer of an operation, in the seed's spelling. */
  answer<T>(operationId: string, answer: UpstreamAnswer<T>): UpstreamAnswer<T> {
    if (answer.status >= 400) return this.refusal(answer);
    const schema = this.contract.operation(operationId).responseSchemas[String(answer.status)];
    if (!schema || answer.data === undefined) return answer;
    return { ...answer, data: this.spell(schema, answer.data) as T };
  }

  private refusal<T>(answer: UpstreamAnswer<T>): UpstreamAnswer<T> {
    const [first, ...rest] = answer.messages;
    const spelling = this.refusals.find(
      ({ when }) =>
        when.status === answer.status &&
        String(when.code) === first?.code &&
        (when.messageContains === undefined || (first.text ?? '').includes(when.messageContains)),
    );
    if (!spelling || !first) return answer;
    return {
      ...answer,
      status: spelling.as.status,
      messages: [{ ...first, code: String(spelling.as.code) }, ...rest],
    };
  }

  private spell(schema: Schema, value: unknown): unknown {
    const resolved = this.resolve(schema);
    if (!this.carries(resolved)) return value;
    const spellings = resolved['x-portico-spellings'] as Record<string, string> | undefined;
    if (typeof value === 'string') return spellings?.[value] ?? value;
    if (value === null || typeof value !== 'object') return value;
    if (Array.isArray(value)) {
      const items = resolved.items as Schema | undefined;
      return items ? value.map((item) => this.spell(items, item)) : value;
    }
    const given = value as Record<string, unknown>;
    // Copied once, at the first property whose spelling changes it.
    let out: Record<string, unknown> | undefined;
    for (const part of this.parts(resolved)) {
      const properties = (part.properties ?? {}) as Record<string, Schema>;
      for (const name in properties) {
        if (!(name in given)) continue;
        const spelled = this.spell(properties[name], (out ?? given)[name]);
        if (spelled === (out ?? given)[name]) continue;
        out ??= { ...given };
        out[name] = spelled;
      }
    }
    return out ?? given;
  }

  /** The schema and its allOf / oneOf / anyOf parts, resolved (kept per schema: the contract never changes). */
  private parts(schema: Schema): Schema[] {
    let parts = this.partsOf.get(schema);
    if (!parts) {
      const combined = ['allOf', 'oneOf', 'anyOf'].flatMap(
        (key) => (schema[key] as Schema[] | undefined) ?? [],
      );
      parts = [schema, ...combined.flatMap((part) => this.parts(this.resolve(part)))];
      this.partsOf.set(schema, parts);
    }
    return parts;
  }

  private carries(schema: Schema, seen = new Set<Schema>()): boolean {
    const known = this.spelled.get(schema);
    if (known !== undefined) return known;
    if (seen.has(schema)) return false;
    seen.add(schema);
    const inner = [
      ...this.parts(schema).slice(1),
      ...Object.values((schema.properties ?? {}) as Record<string, Schema>),
      ...(schema.items ? [schema.items as Schema] : []),
    ].map((part) => this.resolve(part));
    const carries =
      schema['x-portico-spellings'] !== undefined || inner.some((part) => this.carries(part, seen));
    this.spelled.set(schema, carries);
    return carries;
  }

  private resolve(schema: Schema): Schema {
    let current = schema;
    for (let depth = 0; typeof current.$ref === 'string' && depth < 20; depth++)
      current = this.contract.schemas[current.$ref.replace('#/components/schemas/', '')];
    return current;
  }
}
