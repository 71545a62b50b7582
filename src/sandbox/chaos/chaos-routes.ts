import type { FastifyInstance } from 'fastify';
import { ChaosRuleError, type Chaos, type ChaosRuleInput } from './chaos.js';

/**
 * The HTTP controls of a Chaos registry, on a sandbox control listener: POST adds a rule, GET lists the
 * rules with their counts, DELETE clears them all, DELETE …/{id} deletes one.
 */
export function registerChaosControls(
  server: FastifyInstance,
  chaos: Chaos,
  path = '/sandbox/chaos',
): void {
  server.post(path, async (request, reply) => {
    try {
      return reply.code(201).send(chaos.add(request.body as ChaosRuleInput));
    } catch (error) {
      if (!(error instanceof ChaosRuleError)) throw error;
      return reply.code(400).send({ error: error.message, problems: error.problems });
    }
  });
  server.get(path, async () => ({ rules: chaos.list() }));
  server.delete(path, async (_request, reply) => {
    chaos.clear();
    return reply.code(204).send();
  });
  server.delete(`${path}/:id`, async (request, reply) => {
    const { id } = request.params as { id: string };
    return /^\d+$/.test(id) && chaos.remove(Number(id))
      ? reply.code(204).send()
      : reply.code(404).send({ error: 'no such chaos rule' });
  });
}
