import { Injectable, type PipeTransform } from '@nestjs/common';
import { ValidationFailedException } from '#src/platform/errors/to-problem.js';

/** `?wait=`: whole seconds from 0 to 600; absent: undefined (the configured wait). */
@Injectable()
class WaitSecondsPipe implements PipeTransform {
  transform(value: unknown): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || !/^\d{1,3}$/.test(value) || Number(value) > 600)
      throw new ValidationFailedException(
        [{ field: 'wait', reason: 'wait must be whole seconds from 0 to 600' }],
        'request query',
      );
    return Number(value);
  }
}

export const WaitSeconds = new WaitSecondsPipe();
