import type { SandboxOptions } from './sandbox.js';

/**
 * The sandbox's own settings when it runs as its own program (`npm run sandbox`): the SANDBOX_*
 * variables the gateway documents too, read here so that the sandbox needs nothing of the gateway.
 */
export function sandboxOptionsFromEnv(env: Record<string, string | undefined>): SandboxOptions {
  const port = (name: string, fallback: number) => {
    const value = env[name] || String(fallback);
    if (!/^\d+$/.test(value) || Number(value) > 65535)
      throw new Error(`${name}: must be a port number (got "${value}")`);
    return Number(value);
  };
  return {
    certsDir: env.SANDBOX_CERTS_DIR || './certs/dev',
    host: env.SANDBOX_HOST || '127.0.0.1',
    openBankingPort: port('SANDBOX_OB_PORT', 8443),
    scaPort: port('SANDBOX_SCA_PORT', 8081),
    cardPort: port('SANDBOX_CARD_PORT', 8444),
    posPort: port('SANDBOX_POS_PORT', 8445),
    scaPublicUrl: env.SANDBOX_SCA_PUBLIC_URL || undefined,
    // With DATABASE_URL the bank keeps its state there (schema `sandbox`); without, in memory.
    ...(env.DATABASE_URL ? { database: { url: env.DATABASE_URL } } : {}),
  };
}
