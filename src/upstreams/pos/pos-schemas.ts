import { CamelCaseSchemas } from '#src/platform/openapi/camel-case-schemas.js';
import { PosContract } from '#src/shared/contracts/pos-contract.js';

/**
 * The POS contract (openapi/upstream/pos.yaml), parsed once per process, and its schemas as the camelCase
 * facade uses them (`POS.check(...)`, `POS.ref(...)`; under their own `Pos…` names in the facade's spec).
 */
export const POS = new CamelCaseSchemas(new PosContract(), '');

export const posContract = POS.contract as PosContract;
