import type { FastifyRequest } from 'fastify';
import { PROBLEM_TYPES, ProblemException, type InvalidField } from './problem.js';
import { ValidationFailedException } from './to-problem.js';

/** How deep a JSON body may nest (objects and arrays); Portico's deepest request body uses five. */
export const MAX_BODY_DEPTH = 64;
const MAX_REPORTED = 10;
const MAX_FIELD_LENGTH = 300;

/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units, no `u`). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const wellFormed = (text: string) => text.replace(new RegExp(LONE_SURROGATE.source, 'g'), '\uFFFD');

const fieldPath = (parent: string, key: string | number) =>
  (typeof key === 'number'
    ? `${parent}[${key}]`
    : parent
      ? `${parent}.${wellFormed(key)}`
      : wellFormed(key)
  ).slice(0, MAX_FIELD_LENGTH);

/** `String.prototype.isWellFormed` (ES2024, in Node 20): native, where the pattern above backtracks. */
const isWellFormed = (text: string) => text.isWellFormed();

/** Why a string cannot be taken: PostgreSQL stores neither U+0000 nor a lone surrogate (nor does UTF-8). */
function stringFault(text: string): string | undefined {
  if (!isWellFormed(text)) return 'a lone UTF-16 surrogate is not a character';
  if (text.includes('\u0000')) return 'U+0000 (NUL) is not allowed';
  return undefined;
}

/**
 * Checks a parsed body before class-transformer and class-validator see it (both recurse, and a body nested
 * thousands deep overflows their stack): at most MAX_BODY_DEPTH levels, and every string and key well-formed
 * Unicode without NUL. Iterative, so that the check itself cannot overflow. Throws the problem to answer.
 */
export function checkBody(body: unknown): void {
  const stack: { value: unknown; depth: number; path: string }[] = [
    { value: body, depth: 0, path: '' },
  ];
  const invalid: InvalidField[] = [];
  while (stack.length > 0 && invalid.length < MAX_REPORTED) {
    const { value, depth, path } = stack.pop()!;
    const name = path || 'body';
    if (typeof value === 'string') {
      const fault = stringFault(value);
      if (fault)
        invalid.push({ field: name, reason: `${name} must be well-formed text: ${fault}` });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_BODY_DEPTH)
      throw new ProblemException({
        status: 400,
        type: PROBLEM_TYPES.malformedBody,
        title: 'Malformed request body',
        detail: `The request body nests deeper than ${MAX_BODY_DEPTH} levels of objects and arrays`,
        errors: [{ field: name, reason: `nested deeper than ${MAX_BODY_DEPTH} levels` }],
      });
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], depth: depth + 1, path: fieldPath(path, i) });
      continue;
    }
    for (const [key, item] of Object.entries(value).reverse()) {
      const keyFault = stringFault(key);
      const field = fieldPath(path, key);
      if (keyFault)
        invalid.push({ field, reason: `the field's name must be well-formed text: ${keyFault}` });
      else stack.push({ value: item, depth: depth + 1, path: field });
    }
  }
  if (invalid.length > 0) throw new ValidationFailedException(invalid);
}

/** Checks the strings of the query string and the path parameters: no NUL, no lone surrogate. */
function checkStrings(values: unknown, where: string): void {
  if (values === null || typeof values !== 'object') return;
  const invalid: InvalidField[] = [];
  for (const [name, value] of Object.entries(values)) {
    for (const text of Array.isArray(value) ? value : [value]) {
      const fault = typeof text === 'string' ? stringFault(text) : undefined;
      if (fault) {
        invalid.push({
          field: wellFormed(name),
          reason: `${name} must be well-formed text: ${fault}`,
        });
        break;
      }
    }
  }
  if (invalid.length > 0) throw new ValidationFailedException(invalid, where);
}

/**
 * Fastify preValidation hook: the body, query and path of every request are checked before the handler,
 * so before class-transformer and class-validator, whatever the content type that was parsed. A refused
 * request reaches the exception filter like any other error, as problem+json.
 */
export function checkRequestInput(
  request: FastifyRequest,
  _reply: unknown,
  done: (error?: Error) => void,
): void {
  try {
    checkStrings(request.params, 'request path');
    checkStrings(request.query, 'request query');
    if (request.body !== undefined) checkBody(request.body);
  } catch (error) {
    done(error as Error);
    return;
  }
  done();
}
