import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';

/** Routes Nest's own log calls (bootstrap, exceptions) into the pino logger. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  /** Nest's own chatter (modules loaded, routes mapped) is debug detail, not operations news. */
  log(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  error(message: unknown, stackOrContext?: string, context?: string): void {
    if (message instanceof Error)
      this.logger.error({ err: message, context: stackOrContext }, message.message);
    else this.write('error', message, context ?? stackOrContext);
  }
  warn(message: unknown, context?: string): void {
    this.write('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.write('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.write('trace', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.write('fatal', message, context);
  }

  private write(
    level: 'info' | 'error' | 'warn' | 'debug' | 'trace' | 'fatal',
    message: unknown,
    context?: string,
  ): void {
    if (typeof message === 'string') this.logger[level]({ context }, message);
    else this.logger[level]({ context, detail: message }, 'log');
  }
}
