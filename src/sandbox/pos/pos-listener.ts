import type { FastifyInstance } from 'fastify';
import type { PosContract } from '#src/shared/contracts/pos-contract.js';
import { installChaos } from '../chaos/chaos-hooks.js';
import { logRequests, type SandboxLog } from '../request-log.js';
import type { Chaos } from '../chaos/chaos.js';
import type { PosSandbox } from './pos-sandbox.js';
import { createPosServer, routeOf } from './pos-server.js';

export interface RunningPos {
  url: string;
  pos: PosSandbox;
  server: FastifyInstance;
}

/** The POS code an injected error of each status carries when its rule gives no body. */
const CODE_BY_STATUS: Record<number, number> = { 400: 10001, 401: 10002, 404: 10006, 408: 10004 };

/**
 * Starts the sandbox's POS listener on its own port (server TLS), with the shared chaos registry applied by operationId with POS error bodies.
 */
export async function startPos(
  pos: PosSandbox,
  chaos: Chaos,
  contract: PosContract,
  options: {
    host: string;
    port: number;
    tls: { key: Buffer; cert: Buffer };
    log?: SandboxLog;
  },
): Promise<RunningPos> {
  const server = createPosServer({ pos, contract, tls: options.tls });
  const operationByRoute = new Map(
    contract.operations.map((op) => [`${op.method} ${routeOf(op)}`, op.operationId]),
  );
  installChaos(server, chaos, {
    operationOf: (request) => operationByRoute.get(`${request.method} ${request.routeOptions.url}`),
    errorBody: (status, ruleId) => ({
      type: CODE_BY_STATUS[status] ?? (status >= 500 ? 99999 : 10001),
      title: `Injected by sandbox chaos rule ${ruleId}`,
    }),
  });
  logRequests(server, 'pos', options.log);
  await server.listen({ host: options.host, port: options.port });
  const port = (server.server.address() as { port: number }).port;
  return { url: `https://localhost:${port}`, pos, server };
}
