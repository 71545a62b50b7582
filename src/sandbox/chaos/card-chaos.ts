import type { FastifyInstance } from 'fastify';
import type { CardContract } from '#src/shared/contracts/card-contract.js';
import { installChaos } from './chaos-hooks.js';
import type { Chaos } from './chaos.js';

/** The card code an injected error of each status carries when its rule gives no body. */
const CODE_BY_STATUS: Record<number, number> = {
  400: 80002,
  401: 10000,
  402: 40004,
  404: 10002,
  405: 10004,
  409: 40025,
  502: 40013,
};

/** Applies the sandbox's chaos registry to the card listener; injected errors carry card error bodies. */
export function installCardChaos(
  server: FastifyInstance,
  chaos: Chaos,
  contract: CardContract,
): void {
  const operationByRoute = new Map(
    contract.operations.map((operation) => [
      `${operation.method} ${operation.path.replace(/\{([^}]+)\}/g, ':$1')}`,
      operation.operationId,
    ]),
  );
  installChaos(server, chaos, {
    operationOf: (request) => operationByRoute.get(`${request.method} ${request.routeOptions.url}`),
    errorBody: (status, ruleId) => ({
      error: {
        status,
        code: CODE_BY_STATUS[status] ?? (status >= 500 ? 99999 : 80002),
        message: `Injected by sandbox chaos rule ${ruleId}`,
      },
    }),
  });
}
