import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { CardContract } from '#src/shared/contracts/card-contract.js';
import { UNSUPPORTED_PARAMETER } from '#src/shared/contracts/card-contract.js';
import type { ContractOperation, FieldProblem } from '#src/shared/contracts/openapi-contract.js';
import { CardError } from './card-context.js';
import type { CardSandbox } from './card-sandbox.js';
import { decodeFormBody, FormBodyError } from './form-body.js';

export interface CardServerOptions {
  card: CardSandbox;
  contract: CardContract;
  tls: { key: Buffer; cert: Buffer };
}

const FORM = 'application/x-www-form-urlencoded';
/** The body of a request whose Content-Type is not a form. */
const NOT_A_FORM = Symbol('not a form');

/** `body.metadata.k` -> `metadata[k]`: the parameter as the client spelled it. */
function parameterName(problem: FieldProblem): string {
  const [, first, ...rest] = problem.path.split('.');
  return `${first ?? problem.path}${rest.map((part) => `[${part}]`).join('')}`;
}

/** Basic auth: the key is the user name; a password, if any, is ignored. */
function keyOf(header: string | undefined): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const key = decoded.split(':')[0];
  return key === '' ? undefined : key;
}

/**
 * The sandbox's card API (server TLS, no client certificate): Basic auth with a merchant's keys
 * (`pk_` only where card.yaml says `x-portico-public-key`), form bodies in the three bracket
 * spellings, requests validated against openapi/upstream/card.yaml with the error code each field
 * names, answers from the CardSandbox of the caller's merchant. Every error is `{ error: {...} }`.
 */
export function createCardServer(options: CardServerOptions): FastifyInstance {
  const { card, contract } = options;
  const server = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    https: { key: options.tls.key, cert: options.tls.cert, minVersion: 'TLSv1.2' },
    // A path id of any length reaches the contract check and its documented refusal, never the router's 414
    // (Node's 16 KiB limit on the request head bounds it).
    routerOptions: { maxParamLength: 16 * 1024 },
  });
  const merchantOf = new WeakMap<FastifyRequest, string>();
  const send = (
    reply: FastifyReply,
    status: number,
    code: number,
    ...values: (string | number)[]
  ) =>
    reply
      .code(status)
      .send({ error: { status, code, message: contract.message(code, ...values) } });

  server.removeAllContentTypeParsers();
  server.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) =>
    done(null, body),
  );
  server.addContentTypeParser('*', { parseAs: 'string' }, (_request, _body, done) =>
    done(null, NOT_A_FORM),
  );

  // An operation card.yaml marks `x-portico-trailing-slash` is served with a trailing slash too.
  const routesOf = (operation: ContractOperation) => {
    const url = operation.path.replace(/\{([^}]+)\}/g, ':$1');
    return contract.takesTrailingSlash(operation.operationId) ? [url, `${url}/`] : [url];
  };
  const operationByRoute = new Map<string, ContractOperation>(
    contract.operations.flatMap((operation) =>
      routesOf(operation).map((url): [string, ContractOperation] => [
        `${operation.method} ${url}`,
        operation,
      ]),
    ),
  );

  // An HTTP server's Date is its clock: the sandbox's, moved by the clock control.
  server.addHook('onRequest', async (_request, reply) => {
    reply.header('date', card.now().toUTCString());
  });

  // Public keys are for browsers: the operations a `pk_` key may call answer cross-origin requests.
  const browserPaths = new Set(
    contract.operations
      .filter((operation) => contract.allowsPublicKey(operation.operationId))
      .flatMap(routesOf),
  );
  for (const url of browserPaths)
    server.options(url, async (_request, reply) =>
      reply
        .code(204)
        .headers({
          'access-control-allow-methods': 'GET, POST',
          'access-control-allow-headers': 'authorization, content-type',
          'access-control-max-age': '600',
        })
        .send(),
    );

  server.addHook('onRequest', async (request, reply) => {
    if (browserPaths.has(request.routeOptions.url ?? ''))
      reply.header('access-control-allow-origin', '*');
    if (request.method === 'OPTIONS') return;
    const operation = operationByRoute.get(`${request.method} ${request.routeOptions.url}`);
    // The payment form takes the public key in its body (checked once the body is decoded).
    if (operation && contract.keyInBodyOf(operation.operationId)) return;
    const key = keyOf(request.headers.authorization);
    const owner = key === undefined ? undefined : card.keyOwner(key);
    if (!owner) return send(reply, 401, 10000);
    if (owner.kind === 'public' && !(operation && contract.allowsPublicKey(operation.operationId)))
      return send(reply, 401, 10003);
    merchantOf.set(request, owner.merchantId);
  });

  server.setErrorHandler((error: { statusCode?: number; code?: string }, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return send(reply, 400, 80002, 'body');
    if (error.statusCode === 415) return send(reply, 400, 80002, 'Content-Type');
    if (error.statusCode && error.statusCode < 500) return send(reply, 400, 80002, 'body');
    return send(reply, 500, 99999);
  });
  server.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const known = contract.operations.some((op) =>
      new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path),
    );
    return known ? send(reply, 405, 10004) : send(reply, 404, 10002);
  });

  const handle =
    (operation: ContractOperation) => async (request: FastifyRequest, reply: FastifyReply) => {
      const params = request.params as Record<string, string>;
      const query = { ...(request.query as Record<string, unknown>) };
      if (request.body === NOT_A_FORM) return send(reply, 400, 80002, 'Content-Type');
      let body: Record<string, unknown>;
      try {
        body = decodeFormBody((request.body as string | undefined) ?? '', (field) =>
          contract.isListField(operation, field),
        );
      } catch (error) {
        if (error instanceof FormBodyError) return send(reply, 400, 80002, error.field);
        throw error;
      }
      const keyField = contract.keyInBodyOf(operation.operationId);
      if (keyField !== undefined) {
        const owner = card.keyOwner(typeof body[keyField] === 'string' ? body[keyField] : '');
        if (owner?.kind !== 'public') return send(reply, 401, 10000);
        merchantOf.set(request, owner.merchantId);
      }
      const fields = contract.bodyFields(operation);
      const extraField = Object.keys(body).find((field) => !fields.includes(field));
      if (extraField !== undefined) return send(reply, 400, UNSUPPORTED_PARAMETER, extraField);
      const queryNames = operation.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      const extraQuery = Object.keys(query).find((name) => !queryNames.includes(name));
      if (extraQuery !== undefined) return send(reply, 400, UNSUPPORTED_PARAMETER, extraQuery);

      // Path ids are not refused for their shape: an id the merchant does not have is not found.
      const problems = contract
        .validateRequest(operation, {
          params,
          query,
          headers: {},
          body: operation.requestBodySchema ? body : undefined,
        })
        .filter((problem) => !problem.path.startsWith('path.'));
      if (problems.length > 0) {
        const problem = problems[0];
        const field = problem.path.split('.')[1] ?? '';
        const code = problem.path.startsWith('body.')
          ? contract.errorCodeOf(operation, field)
          : 80002;
        return send(reply, 400, code, parameterName(problem));
      }
      for (const field of fields) {
        const limit = contract.keyMaxLengthOf(operation, field);
        const value = body[field];
        if (limit === undefined || typeof value !== 'object' || value === null) continue;
        const long = Object.keys(value).find((key) => key.length > limit);
        if (long !== undefined) return send(reply, 400, 80002, `${field}[${long}]`);
      }

      const requestId = request.headers['x-request-id'];
      const answer = card.handle(
        merchantOf.get(request) as string,
        { operationId: operation.operationId, params, query, body },
        typeof requestId === 'string' ? requestId : undefined,
      );
      // A change the store did not take is not reported as made.
      try {
        await card.persisted();
      } catch {
        return send(reply, 500, 99999);
      }
      if (answer instanceof CardError)
        return send(reply, answer.status, answer.code, ...answer.values);
      return reply.code(answer.status).send(answer.body);
    };

  for (const operation of contract.operations)
    for (const url of routesOf(operation))
      server.route({ method: operation.method, url, handler: handle(operation) });
  return server;
}
