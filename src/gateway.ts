import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import type { AppConfig } from './platform/config/app-config.js';
import { checkRequestInput } from './platform/errors/body-checks.js';
import { jsonBodyParser, refuseFormOnJsonRoutes } from './platform/errors/request-bodies.js';
import {
  clientErrorHandler,
  closeIfBodyUnread,
  connectRefused,
  earlyRefusal,
  expectationFailed,
  frameworkErrorHandler,
} from './platform/errors/framework-errors.js';
import { sendProblem } from './platform/errors/problem-reply.js';
import { takeCompletion } from './platform/errors/request-completion.js';
import { ProblemFilter } from './platform/errors/problem.filter.js';
import { createValidationPipe } from './platform/errors/validation.pipe.js';
import { writeRequestLine } from './platform/logging/logger.js';
import { PinoNestLogger } from './platform/logging/nest-logger.js';
import { recordHttpMetrics } from './platform/metrics/http-metrics.js';
import { MetricsListener } from './platform/metrics/metrics-listener.js';
import { Metrics } from './platform/metrics/metrics.service.js';
import { requestContext, type RequestContext } from './platform/logging/request-context.js';
import { loggedPath } from './platform/logging/scrub.js';
import { buildOpenApiDocument, DOCS_PATH, SPEC_PATH } from './platform/openapi/openapi-document.js';
import { PSD2 } from './upstreams/open-banking/psd2-schemas.js';
import { CARD } from './upstreams/card/card-schemas.js';
import { POS } from './upstreams/pos/pos-schemas.js';
import { isUuid } from './shared/uuid.js';
import { endRequestSpan, startRequestSpan } from './platform/tracing/request-span.js';
import { createTracer, ID_ONLY_TRACER } from './platform/tracing/tracer.js';

/** The caller's X-Request-ID when it is a UUID, else a new one. */
export function requestIdFor(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return isUuid(value) ? value.toLowerCase() : randomUUID();
}

export interface GatewayOptions {
  /** Build the module graph without instantiating providers (spec generation, no database). */
  preview?: boolean;
  /** Extra modules mounted beside the app's own (tests mount probes here). */
  imports?: ModuleImport[];
}

type ModuleImport = Parameters<typeof NestFactory.create>[0];

/** The facade's OpenAPI document, with the upstream contracts' schemas its DTOs use. */
export function gatewayOpenApiDocument(app: NestFastifyApplication) {
  return buildOpenApiDocument(app, [PSD2, CARD, POS]);
}

/**
 * The work a guard began for the request (RequestCompletion), finished as its answer is sent: what
 * reaches here without passing the exception filter (which finishes failures) is the handler's answer.
 * Headers are added to a success only (an answer that failed on the way out keeps its own).
 */
function finishAnswered(request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const completion = takeCompletion(request);
  if (!completion) return;
  try {
    completion.answered((headers) => {
      if (reply.statusCode < 400) reply.headers(headers);
    });
  } catch (error) {
    logger.error({ err: error }, 'request completion failed');
  }
}

/** Builds the gateway application (not yet listening): used by main, the tests and the spec script. */
export async function createGateway(
  config: AppConfig,
  logger: Logger,
  options: GatewayOptions = {},
): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    logger: false,
    bodyLimit: config.http.bodyLimitBytes,
    genReqId: (request: { headers: Record<string, string | string[] | undefined> }) =>
      requestIdFor(request.headers['x-request-id']),
    // Refused while closing by the onRequest hook below, as problem+json rather than Fastify's own JSON.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // What Fastify and Node's HTTP parser refuse themselves is problem+json with a request id too.
    frameworkErrors: frameworkErrorHandler(logger),
    clientErrorHandler: clientErrorHandler(logger),
    // Node would answer a missing Host itself (a bare 400); the onRequest hook answers it as problem+json.
    http: { requireHostHeader: false },
  });
  // Node answers an Expect it does not know with a bare 417, and drops a CONNECT, unless someone listens.
  adapter
    .getInstance()
    .server.on('checkExpectation', expectationFailed(logger))
    .on('connect', connectRefused(logger));
  // The spec script builds the gateway too: it exports nothing.
  const tracer = options.preview ? ID_ONLY_TRACER : await createTracer(config.tracing, logger);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config, logger, options.imports, tracer),
    adapter,
    {
      logger: new PinoNestLogger(logger),
      bufferLogs: false,
      preview: options.preview ?? false,
      abortOnError: false,
    },
  );

  const fastify = app.getHttpAdapter().getInstance();
  app.useBodyParser(
    'application/json',
    { bodyLimit: config.http.bodyLimitBytes },
    jsonBodyParser(fastify),
  );
  const contexts = new WeakMap<object, RequestContext>();
  // While shutting down, answers to in-flight requests close their connection so that close() can finish.
  let closing = false;
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const context: RequestContext = {
      requestId: request.id,
      span: startRequestSpan(tracer, request),
    };
    contexts.set(request, context);
    const refusal = earlyRefusal(request, closing);
    if (refusal) return sendProblem(refusal, request, reply, logger);
    requestContext.run(context, done);
  });
  // Body, query and path strings are checked before the handler: before class-transformer recurses into them.
  fastify.addHook('preValidation', refuseFormOnJsonRoutes);
  fastify.addHook('preValidation', checkRequestInput);
  // Body parsing leaves the async context of onRequest: enter it again before the handler.
  fastify.addHook('preHandler', (request, _reply, done) => {
    requestContext.run(contexts.get(request) ?? { requestId: request.id }, done);
  });
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    else closeIfBodyUnread(request, reply);
    finishAnswered(request, reply, logger);
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const context = contexts.get(request);
    if (context?.span) endRequestSpan(context.span, reply.statusCode, context.tenantId);
    writeRequestLine(logger, {
      requestId: request.id,
      tenantId: context?.tenantId,
      traceId: context?.span?.context.traceId,
      method: request.method,
      path: loggedPath(request.url),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime),
    });
    done();
  });
  if (!options.preview) recordHttpMetrics(fastify, app.get(Metrics));

  app.useGlobalFilters(new ProblemFilter(logger));
  app.useGlobalPipes(createValidationPipe());

  if (!options.preview) {
    // Swagger would keep the built document as objects for good, with its 2 MB Swagger UI script, once
    // the docs are first read (about 7 MiB of heap): the document is kept as its JSON text instead (1.1 MB)
    // and parsed back on each docs request, which serves the same bytes (the document is plain JSON).
    let specText: string | undefined;
    const spec = () =>
      JSON.parse((specText ??= JSON.stringify(gatewayOpenApiDocument(app)))) as OpenAPIObject;
    SwaggerModule.setup(DOCS_PATH, app, () => ({}) as OpenAPIObject, {
      patchDocumentOnRequest: () => spec(),
      jsonDocumentUrl: SPEC_PATH,
      yamlDocumentUrl: `${DOCS_PATH}/openapi.yaml`,
      customSiteTitle: 'Portico gateway API',
      swaggerOptions: {
        persistAuthorization: true,
        displayRequestDuration: true,
        operationsSorter: 'alpha',
        tagsSorter: 'alpha',
      },
    });
  }
  await app.init();
  return app;
}

/** Listens on HOST:PORT, then starts the separate `/metrics` listener; app.close() stops both. */
export async function listenGateway(
  app: NestFastifyApplication,
  config: AppConfig,
): Promise<{ metricsUrl?: string }> {
  await app.listen({ host: config.http.host, port: config.http.port });
  return { metricsUrl: await app.get(MetricsListener).start() };
}
