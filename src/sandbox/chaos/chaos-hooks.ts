import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FailedAnswer } from './chaos-rule.js';
import type { Chaos, DrawnFault } from './chaos.js';

/** What chaos needs to know about the listener it is installed on. */
export interface ChaosTarget {
  /** The operationId a request calls; undefined: not an operation, never faulted. */
  operationOf(request: FastifyRequest): string | undefined;
  /** The body of an injected error answer whose rule gives none. */
  errorBody(status: number, ruleId: number): unknown;
}

/** Headers an injected answer keeps from the operation's own. */
const KEPT_HEADERS = new Set(['x-request-id']);

/** Never settles: the reply is never written by Fastify, the socket is the fault's to keep or drop. */
const never = () => new Promise<never>(() => undefined);

/**
 * Applies a Chaos registry to a Fastify listener. Faults that stand in for the operation (status, reset,
 * hang) act in onRequest, before it runs; the others (delay, stall-body, bad-json, act-then-fail) let it
 * run and change its answer in onSend. Sockets left open by a fault are destroyed when the listener closes.
 */
export function installChaos(server: FastifyInstance, chaos: Chaos, target: ChaosTarget): void {
  const held = new Set<Socket>();
  const sleeping = new Set<AbortController>();
  const afterActing = new WeakMap<FastifyRequest, DrawnFault>();
  let closing = false;

  const hold = (socket: Socket) => {
    if (closing) socket.destroy();
    if (socket.destroyed || held.has(socket)) return;
    held.add(socket);
    socket.once('close', () => held.delete(socket));
  };

  server.addHook('onRequest', async (request, reply) => {
    const operation = target.operationOf(request);
    const drawn = operation === undefined ? undefined : chaos.draw(operation);
    if (!drawn) return;
    const { fault } = drawn;
    switch (fault.kind) {
      case 'status':
        reply.code(fault.answer.status).headers(fault.answer.headers);
        return fault.answer.emptyBody
          ? reply.send()
          : reply.send(fault.answer.body ?? target.errorBody(fault.answer.status, drawn.ruleId));
      case 'reset':
        reply.hijack();
        reset(request.raw.socket);
        return;
      case 'hang':
        reply.hijack();
        hold(request.raw.socket);
        return;
      default:
        afterActing.set(request, drawn);
    }
  });

  server.addHook('onSend', async (request, reply, payload) => {
    const drawn = afterActing.get(request);
    if (!drawn) return payload;
    afterActing.delete(request);
    const { fault } = drawn;
    const socket = request.raw.socket;
    if (fault.kind !== 'delay')
      chaos.recordWithheld(drawn.ruleId, { status: reply.statusCode, body: parsed(payload) });
    switch (fault.kind) {
      case 'delay': {
        hold(socket);
        if (closing) return never();
        const controller = new AbortController();
        sleeping.add(controller);
        try {
          await sleep(fault.delayMs, undefined, { signal: controller.signal });
        } catch {
          return never(); // the listener is closing
        } finally {
          sleeping.delete(controller);
        }
        return payload;
      }
      case 'bad-json':
        replaceAnswer(reply, fault.status, {}).type('application/json');
        return fault.text;
      case 'stall-body':
        stall(reply, payload, fault.bytes);
        hold(socket);
        return never();
      case 'act-then-fail':
        if (fault.then.kind === 'reset') reset(socket);
        if (fault.then.kind !== 'status') {
          hold(socket);
          return never();
        }
        return failedPayload(
          reply,
          fault.then.answer,
          target.errorBody(fault.then.answer.status, drawn.ruleId),
        );
      default:
        return payload;
    }
  });

  server.addHook('preClose', async () => {
    closing = true;
    for (const controller of sleeping) controller.abort();
    for (const socket of held) socket.destroy();
  });
}

function parsed(payload: unknown): unknown {
  const text = Buffer.isBuffer(payload) ? payload.toString() : payload;
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Drops the connection without an answer, with a TCP reset where the socket allows it. */
function reset(socket: Socket): void {
  // A TLS socket cannot send a reset itself; the TCP socket it wraps (node's _parent) can.
  const tcp = (socket as Socket & { _parent?: Socket })._parent ?? socket;
  try {
    tcp.resetAndDestroy();
  } catch {
    // not a TCP handle: a plain close is the nearest
  }
  socket.destroy();
}

function replaceAnswer(
  reply: FastifyReply,
  status: number,
  headers: Record<string, string>,
): FastifyReply {
  for (const name of Object.keys(reply.getHeaders()))
    if (!KEPT_HEADERS.has(name)) reply.removeHeader(name);
  return reply.code(status).headers(headers);
}

/** The serialized injected answer that replaces an operation's own (onSend payloads are serialized). */
function failedPayload(reply: FastifyReply, answer: FailedAnswer, defaultBody: unknown): string {
  replaceAnswer(reply, answer.status, answer.headers);
  if (answer.emptyBody) return '';
  const body = answer.body ?? defaultBody;
  if (typeof body === 'string') {
    reply.type('text/plain; charset=utf-8');
    return body;
  }
  reply.type('application/json; charset=utf-8');
  return JSON.stringify(body);
}

/** Sends the answer's status, headers and the start of its body, and nothing more. */
function stall(reply: FastifyReply, payload: unknown, bytes: number | undefined): void {
  let body =
    typeof payload === 'string' || Buffer.isBuffer(payload) ? Buffer.from(payload) : Buffer.of();
  if (body.length < 2) body = Buffer.from('{}');
  const sent = Math.min(bytes ?? Math.floor(body.length / 2), body.length - 1);
  const status = reply.statusCode === 204 || reply.statusCode === 304 ? 200 : reply.statusCode;
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(reply.getHeaders()))
    if (value !== undefined) headers[name] = value;
  headers['content-length'] = body.length;
  reply.raw.writeHead(status, headers);
  reply.raw.flushHeaders();
  if (sent > 0) reply.raw.write(body.subarray(0, sent));
}
