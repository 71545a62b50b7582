import type { OpenApiContract } from '#src/shared/contracts/openapi-contract.js';
import type { ReceivedAnswer } from './received-answer.js';
import { UpstreamError } from './upstream-errors.js';

/** Told of each answer that breaks the contract (the gateway counts them in its metrics). */
export type ContractMismatchListener = (operation: string, problems: string[]) => void;

/**
 * Reads an answer in full and checks it against the contract before anyone uses it; resolves with its
 * body parsed when it is JSON (undefined otherwise).
 */
export type AnswerCheck = (
  method: string,
  schemaPath: string,
  answer: ReceivedAnswer,
) => Promise<{ text: string; body: unknown }>;

/**
 * The check of an upstream's answers against its contract (the typed clients run it on every answer):
 * a body that is not the JSON it claims, a body that stalls or breaks off, an undeclared status, a
 * missing required header or a body that breaks the declared schema becomes a `bad-response`
 * UpstreamError (502), never a pass-through.
 */
export function contractCheck(
  upstream: string,
  contract: OpenApiContract,
  onMismatch: ContractMismatchListener,
): AnswerCheck {
  return async (method, schemaPath, answer) => {
    let text: string;
    try {
      text = await answer.text();
    } catch (error) {
      throw new UpstreamError(upstream, 'bad-response', 'the answer body broke off', error);
    }
    let body: unknown;
    if (text !== '' && /[/+]json\b/.test(answer.headers.get('content-type') ?? '')) {
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
    const operation = contract.operationAt(method, schemaPath);
    // A 5xx is a failure whatever its body: the seam maps it, retrying reads.
    if (operation && answer.status < 500) {
      const problems = contract.validateResponse(
        operation.operationId,
        answer.status,
        Object.fromEntries(answer.headers),
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
    return { text, body };
  };
}
