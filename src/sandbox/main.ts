// `npm run sandbox`: the provider's sandbox alone, on the addresses configured by SANDBOX_*.
import { sandboxOptionsFromEnv } from './sandbox-env.js';
import { standaloneSandboxLog } from './request-log.js';
import { startSandbox } from './sandbox.js';

async function main(): Promise<void> {
  // eslint-disable-next-line no-restricted-properties -- the sandbox is its own program, with its own settings
  const options = sandboxOptionsFromEnv(process.env);
  const sandbox = await startSandbox({ ...options, log: standaloneSandboxLog() });
  process.stdout.write(
    `Portico sandbox is running\n` +
      `  open-banking API (mutual TLS): ${sandbox.openBankingUrl}   client certificates: ${options.certsDir}/tpp.pem (CA ${options.certsDir}/ca.pem)\n` +
      `  card API (TLS, Basic auth):     ${sandbox.cardUrl}   test merchant: POST ${sandbox.scaUrl}/sandbox/card/merchants\n` +
      `  POS interface (TLS, p_ keys):  ${sandbox.posUrl}/pos/v1   terminals: POST ${sandbox.scaUrl}/sandbox/pos/merchants/{merchantId}/terminals\n` +
      `  SCA pages and controls:        ${sandbox.scaUrl}\n` +
      `  test users: see docs/sandbox.md ("Sandbox test users")\n`,
  );
  const stop = () => void sandbox.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** The sandbox's listeners, each with the variable that moves it. */
const PORT_VARIABLES = [
  ['SANDBOX_OB_PORT', 'openBankingPort'],
  ['SANDBOX_SCA_PORT', 'scaPort'],
  ['SANDBOX_CARD_PORT', 'cardPort'],
  ['SANDBOX_POS_PORT', 'posPort'],
] as const;

main().catch((error: unknown) => {
  const { code, port } = (error ?? {}) as { code?: unknown; port?: unknown };
  if (code === 'EADDRINUSE' && typeof port === 'number') {
    // eslint-disable-next-line no-restricted-properties -- the sandbox is its own program, with its own settings
    const options = sandboxOptionsFromEnv(process.env);
    const variable = PORT_VARIABLES.find(([, key]) => options[key] === port)?.[0];
    if (variable) {
      process.stderr.write(
        `portico sandbox: port ${port} is already in use (EADDRINUSE): stop what listens there, or start with ${variable}=<another port> (0: any free port).\n`,
      );
      process.exit(1);
    }
  }
  process.stderr.write(
    `portico sandbox: ${error instanceof Error && error.message.includes(': must be') ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
