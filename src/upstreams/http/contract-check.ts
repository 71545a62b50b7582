import type { Middleware } from 'openapi-fetch';
import type { OpenApiContract } from '#src/shared/contracts/openapi-contract.js';
import { ReceivedAnswer } from './received-answer.js';
import { UpstreamError } from './upstream-errors.js';

/** Told of each answer that breaks the contract (the gateway counts them in its metrics). */
export type ContractMismatchListener = (operation: string, problems: string[]) => void;

/**
 * openapi-fetch middleware (over UpstreamTransport.fetch, whose answers are ReceivedAnswers) that reads
 * each answer in full and checks it against the upstream's contract before anyone uses it: a body that
 * is not the JSON it claims, a body that stalls or breaks off, an undeclared status, a missing required
 * header or a body that breaks the declared schema becomes a `bad-response` UpstreamError (502), never a
 * pass-through.
 */
export function contractCheck(
  upstream: string,
  contract: OpenApiContract,
  onMismatch: ContractMismatchListener,
): Middleware {
  return {
    async onResponse({ request, response, schemaPath }) {
      const operation = contract.operationAt(request.method, schemaPath);
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw new UpstreamError(upstream, 'bad-response', 'the answer body broke off', error);
      }
      let body: unknown;
      if (text !== '' && /[/+]json\b/.test(response.headers.get('content-type') ?? '')) {
        try {
          body = JSON.parse(text);
        } catch (error) {
          throw new UpstreamError(
            upstream,
            'bad-response',
            'answered JSON that does not parse',
            error,
          );
        }
      }
      // A 5xx is a failure whatever its body: the seam maps it, retrying reads.
      if (operation && response.status < 500) {
        const problems = contract.validateResponse(
          operation.operationId,
          response.status,
          Object.fromEntries(response.headers),
          body,
        );
        if (problems.length) {
          const described = problems.slice(0, 5).map((p) => `${p.path} ${p.message}`);
          onMismatch(operation.operationId, described);
          throw new UpstreamError(
            upstream,
            'bad-response',
            `${operation.operationId} answer breaks the contract: ${described.join('; ')}`,
          );
        }
      }
      // The answer is read and parsed once: openapi-fetch reads it with `json()` or `text()`.
      if (response instanceof ReceivedAnswer) response.parsedAs(text, body);
    },
  };
}
