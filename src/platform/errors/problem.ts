import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';
import { PRINTABLE_TEXT_SOURCE } from '../common/text.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Problem types Portico defines; anything else is `about:blank` with the HTTP status title. */
export const PROBLEM_TYPES = {
  validation: 'urn:portico:problem:validation-failed',
  unauthenticated: 'urn:portico:problem:unauthenticated',
  forbidden: 'urn:portico:problem:forbidden',
  notFound: 'urn:portico:problem:not-found',
  conflict: 'urn:portico:problem:conflict',
  rateLimited: 'urn:portico:problem:rate-limited',
  malformedBody: 'urn:portico:problem:malformed-body',
  malformedRequest: 'urn:portico:problem:malformed-request',
  bodyTooLarge: 'urn:portico:problem:body-too-large',
  uriTooLong: 'urn:portico:problem:uri-too-long',
  unsupportedMediaType: 'urn:portico:problem:unsupported-media-type',
  unavailable: 'urn:portico:problem:unavailable',
  internal: 'urn:portico:problem:internal-error',
} as const;

export class InvalidField {
  /** Path of the offending field: `access.accounts[0].iban`, or a header as `header:Consent-ID`. */
  @ApiProperty({ example: 'slug', maxLength: 300, pattern: PRINTABLE_TEXT_SOURCE })
  field: string;

  /** Why the value was refused. */
  @ApiProperty({
    example: 'slug must match /^[a-z0-9][a-z0-9-]{1,62}$/',
    maxLength: 1000,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  reason: string;
}

export class UpstreamOutcome {
  @ApiPropertyOptional({
    description: "The bank's HTTP status",
    format: 'int32',
    minimum: 100,
    maximum: 599,
    example: 503,
  })
  status?: number;

  @ApiPropertyOptional({
    description: "The bank's Berlin Group code",
    maxLength: 40,
    pattern: '^[A-Z_]+$',
    example: 'FORMAT_ERROR',
  })
  code?: string;

  @ApiPropertyOptional({
    description: "The bank's message",
    maxLength: 500,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  text?: string;

  @ApiPropertyOptional({
    description: 'The field the bank named',
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  path?: string;

  @ApiPropertyOptional({
    description: 'When no answer came: refused, tls, connection, timeout, bad-response',
    enum: ['refused', 'tls', 'connection', 'timeout', 'bad-response'],
  })
  failure?: string;
}

/** RFC 9457 problem details, the body of every error answer. */
export class Problem {
  @ApiProperty({
    description: 'URI identifying the problem type',
    example: PROBLEM_TYPES.validation,
    maxLength: 200,
    format: 'uri-reference',
  })
  type: string;

  @ApiProperty({
    description: 'Short summary of the problem type',
    example: 'Validation failed',
    maxLength: 200,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  title: string;

  @ApiProperty({
    description: 'HTTP status code',
    example: 400,
    format: 'int32',
    minimum: 100,
    maximum: 599,
  })
  status: number;

  @ApiPropertyOptional({
    description: 'What went wrong with this request',
    example: 'The request body has 1 invalid field',
    maxLength: 2000,
    pattern: PRINTABLE_TEXT_SOURCE,
  })
  detail?: string;

  @ApiProperty({
    description: 'Path of the request',
    example: '/v1/tenants',
    maxLength: 2000,
    format: 'uri-reference',
  })
  instance: string;

  @ApiProperty({
    description: 'The request id (X-Request-ID), for support and log correlation',
    format: 'uuid',
    example: '2f3c1a8e-4a55-4a43-9c1e-8f2b2f6d9a10',
    maxLength: 36,
  })
  requestId: string;

  @ApiProperty({
    description:
      "The request's W3C trace id (the caller's traceparent, or a trace Portico started), for distributed tracing",
    pattern: '^[0-9a-f]{32}$',
    example: '4bf92f3577b34da6a3ce929d0e0e4736',
    minLength: 32,
    maxLength: 32,
  })
  traceId: string;

  @ApiPropertyOptional({
    description: 'The offending fields, on validation failures',
    type: [InvalidField],
    maxItems: 100,
  })
  errors?: InvalidField[];

  @ApiPropertyOptional({
    description:
      'Berlin Group code of a consent or payment refusal (CONSENT_UNKNOWN, CONSENT_INVALID, CONSENT_EXPIRED, RESOURCE_UNKNOWN, ACCESS_EXCEEDED, STATUS_INVALID)',
    maxLength: 40,
    pattern: '^[A-Z_]+$',
    example: 'CONSENT_EXPIRED',
  })
  code?: string;

  @ApiPropertyOptional({
    description:
      'The consent the problem is about, when it must be renewed (type urn:portico:problem:consent:renewal-required)',
    format: 'uuid',
    maxLength: 36,
  })
  consentId?: string;

  @ApiPropertyOptional({
    description: 'What the bank answered, when it refused or failed',
    type: () => UpstreamOutcome,
  })
  upstream?: UpstreamOutcome;
}

export interface ProblemInit {
  status: number;
  type?: string;
  title?: string;
  detail?: string;
  errors?: InvalidField[];
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
}

/** Throw this to answer with a specific problem; the filter renders it. */
export class ProblemException extends Error {
  constructor(public readonly init: ProblemInit) {
    super(init.detail ?? init.title ?? STATUS_CODES[init.status] ?? 'Error');
    this.name = 'ProblemException';
  }
}

export function statusTitle(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}
