import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CamelCaseSchemas } from '#src/platform/openapi/camel-case-schemas.js';
import { OpenApiContract } from '#src/shared/contracts/openapi-contract.js';

/** openapi/upstream/card.yaml: the provider's card API, the source of truth for sandbox and gateway. */
export const CARD_SPEC_FILE = fileURLToPath(
  new URL('../../../openapi/upstream/card.yaml', import.meta.url),
);

/**
 * The card contract, parsed once per process, and its schemas as the camelCase facade uses them
 * (`CARD.check(...)`, `CARD.ref(...)`; `Card…` in the facade's spec).
 */
export const CARD = new CamelCaseSchemas(
  new OpenApiContract('card', readFileSync(CARD_SPEC_FILE, 'utf8')),
  'Card',
);

export const cardContract = CARD.contract;
