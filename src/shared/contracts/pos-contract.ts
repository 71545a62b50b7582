import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OpenApiContract, type FieldProblem, type Schema } from './openapi-contract.js';

/** openapi/upstream/pos.yaml: the provider's POS terminal interface, the source of truth for sandbox and gateway. */
export const POS_SPEC_FILE = fileURLToPath(
  new URL('../../../openapi/upstream/pos.yaml', import.meta.url),
);

export interface PosErrorSpec {
  status: number;
  title: string;
}

/**
 * The POS contract, with what it adds to OpenAPI: the table of error codes with their HTTP status and
 * title (`x-portico-pos-errors`), and metadata's key length (`x-portico-key-max-length`). Bodies are
 * JSON and checked as they are; query arguments arrive as text and are coerced to their schema's types.
 */
export class PosContract extends OpenApiContract {
  private static committedOne?: PosContract;

  /**
   * The committed spec's contract, parsed and compiled once per process: it never changes, and a test
   * run starts a sandbox for each of its gateways (about a second of parsing and schema compiling each).
   */
  static committed(): PosContract {
    return (PosContract.committedOne ??= new PosContract());
  }

  readonly errors: Record<string, PosErrorSpec>;

  constructor(text: string = readFileSync(POS_SPEC_FILE, 'utf8')) {
    super('pos', text, { coerceRequests: true });
    this.errors = (
      this.document['x-portico-pos-errors'] as { codes: Record<string, PosErrorSpec> }
    ).codes;
  }

  /** The status and title of a POS error code. */
  error(code: number): PosErrorSpec {
    const spec = this.errors[String(code)];
    if (!spec) throw new Error(`pos.yaml has no error ${code}`);
    return spec;
  }

  /** Checks a JSON body against a schema of the contract without coercing it; problems name JSON paths. */
  checkBody(schemaName: string, body: unknown): FieldProblem[] {
    const problems = this.validate({ $ref: `#/components/schemas/${schemaName}` }, body, '');
    const keyLimit = this.metadataKeyLimit();
    const metadata = (body as { metadata?: unknown } | null)?.metadata;
    if (metadata && typeof metadata === 'object' && !Array.isArray(metadata))
      for (const key of Object.keys(metadata))
        if (key.length > keyLimit)
          problems.push({
            path: `.metadata.${key}`,
            message: `key must NOT have more than ${keyLimit} characters`,
          });
    return problems.map((problem) => ({ ...problem, path: problem.path.replace(/^\./, '') }));
  }

  private metadataKeyLimit(): number {
    const schema = this.schemas.PosMetadata as Schema;
    return (schema['x-portico-key-max-length'] as number | undefined) ?? 40;
  }
}
