import { ArgumentsHost, Catch, ExceptionFilter, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { LOGGER } from '../logging/logging.module.js';
import { sendProblem } from './problem-reply.js';
import { takeCompletion } from './request-completion.js';

/**
 * Every exception a controller, guard or pipe throws becomes problem+json here, once the work a guard
 * began for the request is finished (RequestCompletion), which may restate the error.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(@Inject(LOGGER) private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    const completion = takeCompletion(request);
    if (!completion) return sendProblem(exception, request, reply, this.logger);
    void completion
      .failed(exception)
      .catch((failure: unknown) => failure)
      .then((answer) => sendProblem(answer, request, reply, this.logger));
  }
}
