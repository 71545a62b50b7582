import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { Psd2Contract } from '#src/shared/contracts/psd2-contract.js';
import type { SandboxBank } from './bank/sandbox-bank.js';
import { tppError } from './tpp-messages.js';
import { tppIdentityOf } from './tpp-identity.js';
import { acceptsJson } from './content-negotiation.js';
import { isUuid } from '#src/shared/uuid.js';

export interface OpenBankingServerOptions {
  bank: SandboxBank;
  contract: Psd2Contract;
  tls: { key: Buffer; cert: Buffer; ca: Buffer };
}

/**
 * The sandbox's open-banking API: mutual TLS (a client certificate from the sandbox CA, checked at the
 * handshake), the PSD2 role each API needs, content negotiation (JSON only: 406 for another Accept,
 * 415 for another body type), requests validated against openapi/upstream/psd2.yaml, answers from the
 * bank. Every error carries a tppMessages body.
 */
export function createOpenBankingServer(options: OpenBankingServerOptions): {
  server: FastifyInstance;
  handshakes: () => number;
} {
  const { bank, contract } = options;
  const server = Fastify({
    logger: false,
    // A path id of any length reaches the contract check and its documented refusal, never the router's 414
    // (Node's 16 KiB limit on the request head bounds it).
    routerOptions: { maxParamLength: 16 * 1024 },
    https: {
      key: options.tls.key,
      cert: options.tls.cert,
      ca: options.tls.ca,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    genReqId: (request) => {
      const header = request.headers['x-request-id'];
      return isUuid(header) ? header : randomUUID();
    },
  });
  let handshakes = 0;
  server.server.on('secureConnection', () => handshakes++);
  // JSON only: without its text parser Fastify answers a text/plain body 415, like any other non-JSON type.
  server.removeContentTypeParser('text/plain');

  server.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const identity = tppIdentityOf(request.raw.socket as TLSSocket);
    if (!identity)
      return reply
        .code(401)
        .send(
          tppError('CERTIFICATE_INVALID', 'The client certificate could not be read as a QWAC'),
        );
    const path = request.url.split('?')[0];
    const needed = contract.roleForPath(path);
    const allowed = needed ? identity.roles.includes(needed) : identity.roles.length > 0;
    if (!allowed) {
      const what = needed ? `the PSD2 role ${needed}` : 'a PSD2 role';
      return reply
        .code(401)
        .send(
          tppError(
            'CERTIFICATE_INVALID',
            `The client certificate lacks ${what}, which this API requires`,
          ),
        );
    }
    if (!acceptsJson(request.headers.accept))
      return reply
        .code(406)
        .send(
          tppError(
            'REQUESTED_FORMATS_INVALID',
            `Accept ${request.headers.accept} is not served; every answer is application/json`,
            'Accept',
          ),
        );
  });

  server.setErrorHandler(
    (error: { statusCode?: number; code?: string; message: string }, request, reply) => {
      const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
      if (status === 500) return reply.code(500).send();
      if (status === 415) {
        const type = request.headers['content-type'];
        return reply
          .code(415)
          .send(
            tppError(
              'FORMAT_ERROR',
              type
                ? `Content-Type ${type} is not supported; send application/json`
                : 'A request body needs Content-Type application/json',
              'Content-Type',
            ),
          );
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
        return reply.code(413).send(tppError('FORMAT_ERROR', 'Request body is too large'));
      return reply.code(status).send(tppError('FORMAT_ERROR', error.message));
    },
  );
  server.setNotFoundHandler((request, reply) => {
    const known = contract.operations.some((op) =>
      new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(request.url.split('?')[0]),
    );
    return known
      ? reply
          .code(405)
          .send(tppError('SERVICE_INVALID', `${request.method} is not supported on this path`))
      : reply
          .code(404)
          .send(tppError('RESOURCE_UNKNOWN', `No resource at ${request.url.split('?')[0]}`));
  });

  for (const operation of contract.operations) {
    server.route({
      method: operation.method,
      url: operation.path.replace(/\{([^}]+)\}/g, ':$1'),
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const params = request.params as Record<string, string>;
        const query = request.query as Record<string, string | undefined>;
        const headers = request.headers as Record<string, string | undefined>;
        const problems = contract.validateRequest(operation, {
          params,
          query,
          headers,
          body: request.body,
        });
        // An unknown product is answered by the bank (404 PRODUCT_UNKNOWN) before anything else is
        // looked at, as Berlin Group does, although the contract also lists the products as an enum.
        const unknownProduct = problems.some((p) => p.path === 'path.paymentProduct');
        if (problems.length > 0 && !unknownProduct) {
          return reply.code(400).send({
            tppMessages: problems.slice(0, 20).map((p) => ({
              category: 'ERROR',
              code: 'FORMAT_ERROR',
              path: p.path,
              text: `${p.path} ${p.message}`.slice(0, 500),
            })),
          });
        }
        const identity = tppIdentityOf(request.raw.socket as TLSSocket);
        const answer = bank.handle({
          operationId: operation.operationId,
          params,
          query,
          headers,
          body: request.body,
          tppId: identity?.tppId ?? '',
        });
        // A change the store did not take is not reported as made (Berlin Group: 500 without a body).
        try {
          await bank.persisted();
        } catch {
          return reply.code(500).send();
        }
        if (answer.headers) reply.headers(answer.headers);
        reply.code(answer.status);
        return answer.body === undefined ? reply.send() : reply.send(answer.body);
      },
    });
  }
  return { server, handshakes: () => handshakes };
}
