// `npm run sandbox`: the provider's sandbox alone, on the addresses configured by SANDBOX_*.
import { ConfigError, loadConfig } from '../platform/config/app-config.js';
import { startSandbox } from './sandbox.js';

async function main(): Promise<void> {
  const config = loadConfig();
  const sandbox = await startSandbox({ ...config.sandbox });
  process.stdout.write(
    `Portico sandbox is running\n` +
      `  open-banking API (mutual TLS): ${sandbox.openBankingUrl}   client certificates: ${config.sandbox.certsDir}/tpp.pem (CA ${config.sandbox.certsDir}/ca.pem)\n` +
      `  SCA pages and controls:        ${sandbox.scaUrl}\n` +
      `  test users: see README.md ("Sandbox test users")\n`,
  );
  const stop = () => void sandbox.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `portico sandbox: ${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
