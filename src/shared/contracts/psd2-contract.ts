import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Psd2Role } from '../qwac/qwac-reader.js';
import { OpenApiContract, type Schema } from './openapi-contract.js';

/** openapi/upstream/psd2.yaml: the upstream open-banking contract, the source of truth for both the sandbox and the gateway. */
export const PSD2_SPEC_FILE = fileURLToPath(
  new URL('../../../openapi/upstream/psd2.yaml', import.meta.url),
);

export interface ProductRule {
  aliases: string[];
  currencies?: string[];
  required: string[];
  schema?: Schema;
}

export type ProductRules = Record<string, ProductRule>;

/** The open-banking contract, with its product rules (`x-portico-product-rules`) and role rules. */
export class Psd2Contract extends OpenApiContract {
  private static committedOne?: Psd2Contract;

  /**
   * The committed spec's contract, parsed and compiled once per process: it never changes, and a test
   * run starts a sandbox for each of its gateways (about a second of parsing and schema compiling each).
   */
  static committed(): Psd2Contract {
    return (Psd2Contract.committedOne ??= new Psd2Contract());
  }

  readonly productRules: ProductRules;

  constructor(text: string = readFileSync(PSD2_SPEC_FILE, 'utf8')) {
    super('psd2', text);
    const { notes: _notes, ...rules } = this.schemas.PaymentDetails[
      'x-portico-product-rules'
    ] as Record<string, unknown>;
    this.productRules = rules as ProductRules;
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
}
