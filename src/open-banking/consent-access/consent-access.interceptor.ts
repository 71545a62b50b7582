import {
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { catchError, from, map, type Observable } from 'rxjs';
import type { ConsentAccessRequest } from './consent-access.guard.js';
import { budgetHeaders, ConsentAccessService } from './consent-access.service.js';

/**
 * Completes what the consent-access guard admitted: the access-log row of the call, the budget
 * headers of the answer, and the budget unit given back when the bank certainly did not serve it.
 */
@Injectable()
export class ConsentAccessInterceptor implements NestInterceptor {
  constructor(private readonly access: ConsentAccessService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const grant = context.switchToHttp().getRequest<ConsentAccessRequest>().consentAccess;
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    if (!grant) return next.handle();
    return next.handle().pipe(
      map((data) => {
        const budget = this.access.completed(grant);
        if (budget) reply.headers(budgetHeaders(budget));
        return data;
      }),
      catchError((error: unknown) =>
        from(
          this.access.failed(grant, error).then((answered) => {
            throw answered;
          }),
        ),
      ),
    );
  }
}
