import type { FastifyInstance } from 'fastify';
import type { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';
import { tppError } from '../open-banking/tpp-messages.js';
import { installChaos } from './chaos-hooks.js';
import type { Chaos } from './chaos.js';

const CODE_BY_STATUS: Record<number, string> = {
  400: 'FORMAT_ERROR',
  401: 'CERTIFICATE_INVALID',
  404: 'RESOURCE_UNKNOWN',
  405: 'SERVICE_INVALID',
  409: 'STATUS_INVALID',
  429: 'ACCESS_EXCEEDED',
  503: 'SERVICE_UNAVAILABLE',
};

/** Applies the registry to the open-banking listener; injected errors carry tppMessages bodies. */
export function installOpenBankingChaos(
  server: FastifyInstance,
  chaos: Chaos,
  contract: Psd2Contract,
): void {
  // The listener routes each contract path as a Fastify pattern (`{consentId}` -> `:consentId`).
  const operationByRoute = new Map(
    contract.operations.map((operation) => [
      `${operation.method} ${operation.path.replace(/\{([^}]+)\}/g, ':$1')}`,
      operation.operationId,
    ]),
  );
  installChaos(server, chaos, {
    operationOf: (request) => operationByRoute.get(`${request.method} ${request.routeOptions.url}`),
    errorBody: (status, ruleId) =>
      tppError(
        CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'FORMAT_ERROR'),
        `Injected by sandbox chaos rule ${ruleId}`,
      ),
  });
}
