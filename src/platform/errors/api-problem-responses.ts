import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE, Problem } from './problem.js';

const problemContent = {
  [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } },
};

/**
 * Documents problem+json answers with the given statuses. Describe the cause: the spec builder writes each
 * response's example from its status and this description (src/platform/openapi/problem-examples.ts), so
 * name the Berlin Group code (CONSENT_UNKNOWN) when the answer carries one.
 */
export function ApiProblems(responses: Record<number, string>): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(Problem),
    ...Object.entries(responses).map(([status, description]) =>
      ApiResponse({ status: Number(status), description, content: problemContent }),
    ),
  );
}

/** The answers every operation can give: bad input and internal failure. */
export const ApiStandardProblems = (): MethodDecorator & ClassDecorator =>
  ApiProblems({
    400: 'The request is malformed or a field is invalid (`errors` names each field)',
    500: 'An unexpected failure; the body carries only the request id',
  });
