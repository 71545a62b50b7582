import { Psd2Contract } from '../../shared/contracts/psd2-contract.js';

let contract: Psd2Contract | undefined;

/** The upstream contract (openapi/psd2.yaml), parsed once per process. */
export function psd2(): Psd2Contract {
  contract ??= new Psd2Contract();
  return contract;
}

/** Name under which a psd2.yaml schema appears in the facade's own spec. */
export const facadeSchemaName = (name: string) => `Psd2${name}`;
