import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE, PROBLEM_TYPES, ProblemException } from './problem.js';
import { sendProblem } from './problem-reply.js';
import { traceIdOf } from '../tracing/request-span.js';
import { newTraceId } from '../tracing/trace-context.js';

/**
 * Fastify's `frameworkErrors`: the router refuses a request before any hook runs (a malformed URL: 400; a
 * path parameter over 100 characters: 414). Answered as problem+json with the request's id, like the rest.
 */
export function frameworkErrorHandler(logger: Logger) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    logger.info(
      {
        requestId: request.id,
        traceId: traceIdOf(request),
        method: request.method,
        code: error.code,
      },
      'request refused by the router',
    );
    sendProblem(error, request, reply, logger);
  };
}

interface ClientError extends Error {
  code?: string;
  /** The bytes read so far (a Buffer at run time). */
  rawPacket?: unknown;
}

/** What Node's HTTP parser refused, as a status and a sentence; everything else is a plain 400. */
function clientProblem(code: string | undefined): { status: number; detail: string } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, detail: 'The request headers are larger than the server accepts' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, detail: 'The request did not arrive in time' };
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return { status: 400, detail: 'The Content-Length header is invalid' };
    case 'HPE_INVALID_HEADER_TOKEN':
      return { status: 400, detail: 'A request header is malformed' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, detail: 'The request method is malformed' };
    default:
      return { status: 400, detail: 'The request is not well-formed HTTP/1.1' };
  }
}

/** The request's path, when the request line could be read, else `/` (the problem needs an instance). */
function instanceOf(raw: unknown): string {
  if (!Buffer.isBuffer(raw)) return '/';
  const line = raw.subarray(0, 2048).toString('latin1').split('\r\n', 1)[0];
  const target = /^[A-Z]+ (\/[\x21-\x7e]*) HTTP\/1\.[01]$/.exec(line)?.[1];
  return target ? target.split('?')[0] : '/';
}

/**
 * Fastify's `clientErrorHandler`: Node's HTTP parser refused the bytes (a malformed header, a negative
 * Content-Length, headers over the size limit), so there is no request object and no reply. The answer is
 * written on the socket, problem+json with a fresh request id in the header and the body, then the
 * connection is closed. The raw packet is never logged: it may hold credentials.
 */
export function clientErrorHandler(logger: Logger) {
  return (error: ClientError, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // The request was answered already and its unread body is what broke: a second answer would be one
    // nobody asked for. The connection ends once that answer is out.
    if (answeredOn(socket)) {
      logger.info({ code: error.code }, 'unread request body malformed after its answer');
      return endAfterAnswer(socket);
    }
    const { status, detail } = clientProblem(error.code);
    const ids = { requestId: randomUUID(), traceId: newTraceId() };
    logger.info({ ...ids, code: error.code, status }, 'request refused by the HTTP parser');
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    writeProblem(socket, status, detail, instanceOf(error.rawPacket), ids);
  };
}

/** Sockets whose request was answered before its body was read: they close after that answer. */
const answeredEarly = new WeakSet<Socket>();

/** Whether an answer was, or is being, written on the socket for the request the parser is reading. */
function answeredOn(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })
    ._httpMessage;
  return answeredEarly.has(socket) || current?.headersSent === true || !socket.writable;
}

/** Ends the connection once what is queued on it (the answer) is out. */
function endAfterAnswer(socket: Socket): void {
  const soon = (socket as Socket & { destroySoon?: () => void }).destroySoon;
  if (soon) soon.call(socket);
  else socket.end();
}

/**
 * In onSend: an answer given before the request's body was read (a 415, a 404, a refusal in a guard) says
 * `Connection: close`, and Node closes the connection after it. Node would otherwise read and discard the
 * body to keep the connection, and a malformed body would then reach its parser after the answer.
 */
export function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw as IncomingMessage & { readableEnded?: boolean };
  const length = raw.headers['content-length'];
  const hasBody =
    raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
  if (!hasBody || raw.complete || raw.readableEnded) return;
  reply.header('connection', 'close');
  if (raw.socket) answeredEarly.add(raw.socket);
}

/** A problem+json answer written straight on a socket, which is then closed. */
function writeProblem(
  socket: Socket,
  status: number,
  detail: string,
  instance: string,
  ids: { requestId: string; traceId: string },
): void {
  const title = STATUS_CODES[status] ?? 'Bad Request';
  const body = JSON.stringify({
    type: status === 400 ? PROBLEM_TYPES.malformedRequest : 'about:blank',
    title,
    status,
    detail,
    instance,
    ...ids,
  });
  socket.end(
    [
      `HTTP/1.1 ${status} ${title}`,
      `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-ID: ${ids.requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'),
    () => socket.destroy(),
  );
}

/** Node's `connect`: a CONNECT request (Node would drop the connection without a word) answers 405. */
export function connectRefused(logger: Logger) {
  return (request: IncomingMessage, socket: Socket): void => {
    const ids = { requestId: randomUUID(), traceId: traceIdOf(request) };
    logger.info({ ...ids, method: request.method }, 'request refused: CONNECT');
    if (!socket.writable) return void socket.destroy();
    writeProblem(socket, 405, 'Portico is not a proxy: CONNECT is not supported', '/', ids);
  };
}

/**
 * What the onRequest hook refuses before anything else: every request while the replica shuts down (503,
 * instead of Fastify's own JSON), and an HTTP/1.1 request without Host (400, RFC 9112; instead of Node's
 * bare answer, which Node gives when its requireHostHeader is on).
 */
export function earlyRefusal(
  request: FastifyRequest,
  closing: boolean,
): ProblemException | undefined {
  if (closing)
    return new ProblemException({
      status: 503,
      type: PROBLEM_TYPES.unavailable,
      title: 'Service Unavailable',
      detail: 'This replica is shutting down; send the request again',
    });
  if (request.raw.httpVersion === '1.1' && request.headers.host === undefined)
    return new ProblemException({
      status: 400,
      type: PROBLEM_TYPES.malformedRequest,
      title: 'Bad Request',
      detail: 'An HTTP/1.1 request needs a Host header',
    });
  return undefined;
}

/** Node's `checkExpectation`: an Expect other than 100-continue is answered 417 as problem+json. */
export function expectationFailed(logger: Logger) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const requestId = randomUUID();
    const traceId = traceIdOf(request);
    logger.info({ requestId, traceId, method: request.method }, 'request refused: unknown Expect');
    const body = JSON.stringify({
      type: 'about:blank',
      title: 'Expectation Failed',
      status: 417,
      detail: 'The only expectation this server meets is 100-continue',
      instance: (request.url ?? '/').split('?')[0].slice(0, 2000),
      requestId,
      traceId,
    });
    response.writeHead(417, {
      'content-type': PROBLEM_CONTENT_TYPE,
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
      connection: 'close',
    });
    response.end(body);
  };
}
