import type { AppConfig } from './app-config.js';
import { listeners } from './running-instance.js';

/**
 * A listener that could not open its port, told as what to do about it: the port, and the variable
 * that moves it. Undefined for any other failure (or a port no variable names).
 */
export function portInUseMessage(error: unknown, config: AppConfig): string | undefined {
  const { code, port, address } = (error ?? {}) as {
    code?: unknown;
    port?: unknown;
    address?: unknown;
  };
  if (code !== 'EADDRINUSE' || typeof port !== 'number' || port === 0) return undefined;
  const names = listeners(config)
    .filter((listener) => listener.port === port)
    .map((listener) => listener.variable);
  if (names.length === 0) return undefined;
  const where = typeof address === 'string' ? ` on ${address}` : '';
  return (
    `port ${port}${where} is already in use (EADDRINUSE): another program, or another Portico, ` +
    `listens there. Stop it, or start with ${names[0]}=<another port> (0: any free port).`
  );
}
