import { UpstreamSchemas } from '#src/platform/openapi/upstream-schema.decorator.js';
import { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';

/**
 * The open-banking contract (openapi/upstream/psd2.yaml), parsed once per process, and its schemas as
 * the facade uses them (`PSD2.field(...)`, `PSD2.ref(...)`; `Psd2…` in the facade's spec). Decorators
 * are evaluated when classes load, so the contract they use is loaded here rather than injected.
 */
export const PSD2 = new UpstreamSchemas(new Psd2Contract(), 'Psd2');

export const psd2Contract = PSD2.contract as Psd2Contract;
