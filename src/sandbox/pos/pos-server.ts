import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ContractOperation } from '#src/shared/contracts/openapi-contract.js';
import type { PosContract } from '#src/shared/contracts/pos-contract.js';
import { PosError } from './pos-errors.js';
import type { PosSandbox } from './pos-sandbox.js';

export interface PosServerOptions {
  pos: PosSandbox;
  contract: PosContract;
  tls: { key: Buffer; cert: Buffer };
}

/** Basic auth: the POS key is the user name; a password, if any, is ignored. */
function keyOf(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const key = Buffer.from(match[1], 'base64').toString('utf8').split(':')[0];
  return key === '' ? undefined : key;
}

/** `/pos/v1/transactions/{transactionId}` -> `/pos/v1/transactions/:transactionId`. */
export const routeOf = (operation: ContractOperation) =>
  operation.path.replace(/\{([^}]+)\}/g, ':$1');

/**
 * The sandbox's POS terminal interface (server TLS): Basic auth with a merchant's `p_` key, JSON bodies
 * validated against openapi/upstream/pos.yaml (10001 with `invalid-params`), answers from the
 * PosSandbox; every error is `{ type, title }` with the status pos.yaml gives the code.
 */
export function createPosServer(options: PosServerOptions): FastifyInstance {
  const { pos, contract } = options;
  const server = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    https: { key: options.tls.key, cert: options.tls.cert, minVersion: 'TLSv1.2' },
    // A payment request is held up to 180 s (longer with a fixture): no server timeout may cut it.
    requestTimeout: 0,
    // A path id of any length reaches the contract check and its documented refusal, never the router's 414
    // (Node's 16 KiB limit on the request head bounds it).
    routerOptions: { maxParamLength: 16 * 1024 },
  });
  const merchantOf = new WeakMap<FastifyRequest, string>();
  const send = (reply: FastifyReply, error: PosError) => {
    const { status, title } = contract.error(error.code);
    return reply.code(status).send({
      type: error.code,
      title,
      ...(error.invalidParams ? { 'invalid-params': error.invalidParams } : {}),
    });
  };
  const invalid = (name: string, reason: string) => new PosError(10001, [{ name, reason }]);

  server.addHook('onRequest', async (request, reply) => {
    const key = keyOf(request.headers.authorization);
    const merchantId = key === undefined ? undefined : pos.merchantOfKey(key);
    if (!merchantId) return send(reply, new PosError(10002));
    merchantOf.set(request, merchantId);
  });
  server.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    if (error.statusCode === 415)
      return send(reply, invalid('Content-Type', 'must be application/json'));
    if (error.statusCode && error.statusCode < 500)
      return send(reply, invalid('body', 'is not a JSON object'));
    return reply.code(500).send({ type: 99999, title: 'Unexpected error' });
  });
  server.setNotFoundHandler((_request, reply) => {
    const { title } = contract.error(10001);
    return reply.code(404).send({
      type: 10001,
      title,
      'invalid-params': [{ name: 'path', reason: 'no such POS operation' }],
    });
  });

  const handle =
    (operation: ContractOperation) => async (request: FastifyRequest, reply: FastifyReply) => {
      const params = request.params as Record<string, string>;
      const query = { ...(request.query as Record<string, unknown>) };
      const names = operation.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      const problems = contract
        .validateRequest(operation, { params, query, headers: {}, body: undefined })
        // The JSON body is checked below, uncoerced.
        .filter((p) => !p.path.startsWith('body'))
        .map((p) => ({ name: p.path.replace(/^(query|path)\./, ''), reason: p.message }));
      for (const name of Object.keys(query))
        if (!names.includes(name))
          problems.push({ name, reason: 'is not an argument of this operation' });
      let body: Record<string, unknown> = {};
      if (operation.requestBodySchema) {
        if (
          typeof request.body !== 'object' ||
          request.body === null ||
          Array.isArray(request.body)
        )
          return send(reply, invalid('body', 'must be a JSON object'));
        body = request.body as Record<string, unknown>;
        problems.push(
          ...contract
            .checkBody('PosTransactionRequest', body)
            .map((p) => ({ name: p.path || 'body', reason: p.message })),
        );
      }
      // A terminal token of the wrong shape names no terminal: not registered.
      if (problems.some((p) => p.name === 'terminalToken')) return send(reply, new PosError(10003));
      if (problems.length) return send(reply, new PosError(10001, problems));
      try {
        const answer = await pos.handle(merchantOf.get(request) as string, {
          operationId: operation.operationId,
          params,
          query,
          body,
        });
        await pos.persisted();
        return reply.code(answer.status).send(answer.body);
      } catch (error) {
        // A change the store did not take is not reported as made.
        await pos.persisted();
        if (error instanceof PosError) return send(reply, error);
        throw error;
      }
    };

  for (const operation of contract.operations)
    server.route({ method: operation.method, url: routeOf(operation), handler: handle(operation) });
  server.addHook('preClose', async () => pos.close());
  return server;
}
