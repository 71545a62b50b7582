import { ApiCreatedResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

/** Documents a creation's 201 with the type it answers and its Location header. */
export function ApiCreatedWithLocation(type: new () => object, what: string): MethodDecorator {
  return ApiCreatedResponse({
    type,
    headers: {
      Location: {
        description: `The created ${what} in Portico (its _links.self)`,
        required: true,
        schema: { type: 'string', format: 'uri-reference', maxLength: 200 },
      },
    },
  });
}

/** Answers a creation with Location: Portico's own address of the resource, never the bank's. */
export function withLocation<T extends { _links: { self: string } }>(
  reply: FastifyReply,
  view: T,
): T {
  reply.header('Location', view._links.self);
  return view;
}
