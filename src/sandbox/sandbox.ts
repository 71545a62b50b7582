import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Psd2Contract } from '../shared/contracts/psd2-contract.js';
import { SandboxBank } from './open-banking/bank/sandbox-bank.js';
import { createOpenBankingServer } from './open-banking/open-banking-server.js';
import { createScaServer } from './open-banking/sca-server.js';
import { ensureDevCertificates } from './dev-certificates.js';
import type { Chaos } from './chaos/chaos.js';
import { registerChaosControls } from './chaos/chaos-routes.js';
import { createOpenBankingChaos, installOpenBankingChaos } from './chaos/open-banking-chaos.js';
import { SandboxStateStore } from './persistence/sandbox-state-store.js';

export interface SandboxOptions {
  certsDir: string;
  host: string;
  openBankingPort: number;
  scaPort: number;
  /** Address browsers reach the SCA pages at; default http://localhost:<sca port>. */
  scaPublicUrl?: string;
  now?: () => Date;
  /**
   * Where the bank keeps its state (consents, payments, authorisations, SCA sessions, daily read
   * counters, booked payments) so that a restart on the same database carries on: a PostgreSQL URL
   * (the embedded engine's included) and the schema of the sandbox's own table (default `sandbox`).
   * Absent: the state lives in memory and is gone with the process.
   */
  database?: { url: string; schema?: string };
}

export interface RunningSandbox {
  /** The open-banking API (mutual TLS), e.g. https://localhost:8443 */
  openBankingUrl: string;
  /** The SCA pages and sandbox controls (plain HTTP). */
  scaUrl: string;
  bank: SandboxBank;
  /** Fault injection on the open-banking API; also at /sandbox/chaos on the SCA listener. */
  chaos: Chaos;
  /** TLS handshakes completed on the open-banking listener. */
  tlsHandshakes(): number;
  close(): Promise<void>;
}

/** Starts the provider's sandbox: the open-banking API over mTLS and the SCA pages, sharing one bank. */
export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  ensureDevCertificates(options.certsDir);
  const contract = new Psd2Contract();
  const store = options.database
    ? await SandboxStateStore.open(options.database.url, options.database.schema)
    : undefined;
  try {
    return await listen(options, contract, store);
  } catch (error) {
    await store?.close();
    throw error;
  }
}

async function listen(
  options: SandboxOptions,
  contract: Psd2Contract,
  store: SandboxStateStore | undefined,
): Promise<RunningSandbox> {
  const read = (file: string) => readFileSync(join(options.certsDir, file));
  const storedState = store ? await store.load() : [];
  const chaos = createOpenBankingChaos(contract);

  // The SCA listener must be up before the bank exists: the bank's links point at its address.
  const holder: { bank?: SandboxBank } = {};
  const sca = createScaServer(() => {
    if (!holder.bank) throw new Error('sandbox bank not ready');
    return holder.bank;
  });
  registerChaosControls(sca, chaos);
  const counters = { handshakes: () => 0 };
  sca.get('/sandbox/tls-handshakes', async () => ({ handshakes: counters.handshakes() }));
  await sca.listen({ host: options.host, port: options.scaPort });
  const scaPort = (sca.server.address() as { port: number }).port;
  const scaUrl = options.scaPublicUrl ?? `http://localhost:${scaPort}`;
  try {
    const bank = new SandboxBank({
      scaBaseUrl: scaUrl,
      now: options.now,
      productRules: contract.productRules,
      store,
      storedState,
    });
    holder.bank = bank;
    // The first start writes the anchor day of the account history: a start that cannot store fails here.
    await bank.persisted();

    const openBanking = createOpenBankingServer({
      bank,
      contract,
      tls: { key: read('sandbox.key'), cert: read('sandbox.pem'), ca: read('ca.pem') },
    });
    installOpenBankingChaos(openBanking.server, chaos, contract);
    await openBanking.server.listen({ host: options.host, port: options.openBankingPort });
    const obPort = (openBanking.server.server.address() as { port: number }).port;
    counters.handshakes = openBanking.handshakes;

    return {
      openBankingUrl: `https://localhost:${obPort}`,
      scaUrl,
      bank,
      chaos,
      tlsHandshakes: openBanking.handshakes,
      async close() {
        await Promise.all([openBanking.server.close(), sca.close()]);
        await bank.persisted().catch(() => undefined);
        await store?.close();
      },
    };
  } catch (error) {
    await sca.close();
    throw error;
  }
}
