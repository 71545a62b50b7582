import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { API_KEY_SCHEME, RATE_LIMIT_HEADERS } from './api-conventions.js';
import { Problem } from '../errors/problem.js';
import { documentProblemExamples } from './problem-examples.js';
import type { UpstreamSchemas } from './upstream-schema.decorator.js';

export const DOCS_PATH = 'docs';
export const SPEC_PATH = `${DOCS_PATH}/openapi.json`;

const DESCRIPTION = `Portico is an open-banking TPP gateway. Fintech apps call this facade with an API key;
Portico holds the provider's qualified certificate (eIDAS QWAC) and speaks to the provider over mutual TLS.
The same facade fronts the provider's card, marketplace and POS APIs with each tenant's merchant keys.

Every call carries \`Authorization: Bearer <API key>\`. A key belongs to a tenant and has one of four roles:
\`app\` (a fintech's backend: the open-banking, card, marketplace and POS facades and its tenant's webhooks),
\`admin\` (a fintech's administrator: its own tenant's \`app\` and \`admin\` keys, webhooks and wallet domains),
\`operator\` (whoever runs the installation: every tenant, every tenant's keys of any role, merchant keys,
the readiness checks) and \`auditor\` (a compliance officer: the audit trail of every tenant, read-only).

Every error is \`application/problem+json\` (RFC 9457) with the request id. Send \`X-Request-ID\` (a UUID)
to choose the id; Portico echoes it on every answer and forwards it upstream. Send a W3C \`traceparent\`
(and \`tracestate\`) to make the request part of your trace; Portico starts one otherwise, and every
error names its \`traceId\`.`;

/** Sorts object keys recursively so that the written spec is byte-for-byte stable. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => sortKeys(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value as object)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  ) as T;
}

const TAGS: [string, string][] = [
  [
    'Account-information consents',
    "Consents to read a user's accounts; the user approves them at the bank (SCA)",
  ],
  ['Accounts', 'Accounts, balances and transactions under a valid consent (header Consent-ID)'],
  ['Audit', 'Consents with their status history and every access made under them (role auditor)'],
  ['Brands', 'The banks reachable through the provider'],
  ['Card branches', "The merchant's branches at the card provider, to group payments by"],
  [
    'Card IRIS bank payments',
    'Instant bank payments (IRIS): the session, its payment form, the outcome; paid exactly once',
  ],
  [
    'Card IRIS results',
    "Where the provider sends an IRIS session's signed result (callback and webhook); not called by apps",
  ],
  [
    'Card wallets',
    "Web-wallet tokenisation (the provider's signed card token, verified by Portico, charged once) and device-wallet domains",
  ],
  [
    'Card wallet results',
    "Where the provider's page sends a PAN-only web-wallet result through the payer's browser; not called by apps",
  ],
  [
    'Card notifications',
    "Hosted payment links: payment requests the payer pays on the provider's page",
  ],
  [
    'Card customers',
    'Stored customers with their cards (masked) and mandates, charged again without card fields',
  ],
  [
    'Card payments',
    "Card payments, pre-authorisation and capture, charged with the tenant's own merchant keys; exactly once",
  ],
  ['Card refunds', 'Full and partial refunds of card payments; exactly once'],
  ['Card tokens', "Single-use card tokens (15 minutes), made with the tenant's public key"],
  [
    'POS terminals',
    "Payments and voids on the tenant's physical terminals (a bounded wait, then 202 and polling), the terminals, and their transactions pending for the ERP",
  ],
  ['Confirmation of funds', 'Consents to check one account, and the checks'],
  [
    'Marketplace',
    "The tenant's marketplace at the card provider: sellers, split and direct transfers, reversals, payouts, balances; exactly once",
  ],
  [
    'Payment initiation',
    'Domestic, SEPA and cross-border credit transfers the user approves at the bank',
  ],
  ['SCA callback', "Where the bank sends the user's browser back; not called by apps"],
  [
    'Webhooks',
    'Signed event notifications to the app (Standard Webhooks): endpoints, the event log, replay',
  ],
  [
    'Reconciliation',
    "Portico's records compared with the provider's, daily and on demand: runs (operator) and the drifts they flag (auditor)",
  ],
  ['Health', 'Liveness and readiness probes for orchestrators; no API key'],
  ['Tenants and API keys', 'Who is calling: tenants (fintech apps), their API keys and roles'],
];

const RATE_LIMIT_HEADER_DOCS = {
  [RATE_LIMIT_HEADERS.limit]: {
    description: 'Requests this API key may make per minute',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 1000000 },
  },
  [RATE_LIMIT_HEADERS.remaining]: {
    description: 'Requests left in the current minute',
    schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1000000 },
  },
  [RATE_LIMIT_HEADERS.reset]: {
    description: 'Seconds until the current minute ends',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 60 },
  },
};

/**
 * The API-key guard rate-limits every authenticated call and sends the RateLimit headers on every answer
 * once the key is known: declare them once here, for every response of every secured operation.
 */
function documentRateLimitHeaders(document: OpenAPIObject): void {
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of [
      pathItem.get,
      pathItem.put,
      pathItem.post,
      pathItem.delete,
      pathItem.patch,
    ]) {
      if (!operation?.security?.length) continue;
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response || !/^[24]/.test(status) || '$ref' in response) continue;
        response.headers = { ...response.headers, ...RATE_LIMIT_HEADER_DOCS };
        if (status === '429')
          response.headers['Retry-After'] = {
            description: 'Seconds to wait before the next request',
            schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 60 },
          };
      }
    }
  }
}

/** The facade's OpenAPI document, built from the controllers; operationIds are the method names. */
export function buildOpenApiDocument(
  app: INestApplication,
  upstreams: readonly UpstreamSchemas[],
): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Portico gateway')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .setLicense('Proprietary', 'https://example.invalid/portico/license')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'ptk_<prefix>_<secret>',
        description: 'A Portico API key',
      },
      API_KEY_SCHEME,
    );
  for (const [name, description] of TAGS) config.addTag(name, description);
  const document = SwaggerModule.createDocument(app, config.build(), {
    operationIdFactory: (_controllerKey, methodKey) => methodKey,
    extraModels: [Problem],
  });
  documentRateLimitHeaders(document);
  // The upstream contracts' schemas that facade DTOs reference (validation and docs from one source).
  const upstreamSchemas = Object.assign({}, ...upstreams.map((u) => u.usedSchemas()));
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...(upstreamSchemas as Record<string, never>) },
  };
  documentProblemExamples(document);
  // Relative: Swagger UI and clients use the address they loaded the spec from.
  const server = {
    url: '/',
    description:
      'This gateway: local (npm start), staging or production, wherever the spec was loaded from',
    'x-internal': false,
  };
  document.servers = [server];
  return sortKeys(document);
}

/** The deterministic text committed as openapi/gateway.json. */
export function serializeOpenApiDocument(document: OpenAPIObject): string {
  return `${JSON.stringify(sortKeys(document), null, 2)}\n`;
}
