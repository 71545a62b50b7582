import type { AppConfig } from './app-config.js';

/** The listeners a started process opens, each with the variable that moves it. */
function listeners(config: AppConfig): { variable: string; port?: number }[] {
  return [
    { variable: 'PORT', port: config.http.port },
    { variable: 'METRICS_PORT', port: config.metrics.port },
    { variable: 'SANDBOX_OB_PORT', port: config.sandbox.openBankingPort },
    { variable: 'SANDBOX_SCA_PORT', port: config.sandbox.scaPort },
    { variable: 'SANDBOX_CARD_PORT', port: config.sandbox.cardPort },
    { variable: 'SANDBOX_POS_PORT', port: config.sandbox.posPort },
  ];
}

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
