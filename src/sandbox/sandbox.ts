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

export interface SandboxOptions {
  certsDir: string;
  host: string;
  openBankingPort: number;
  scaPort: number;
  /** Address browsers reach the SCA pages at; default http://localhost:<sca port>. */
  scaPublicUrl?: string;
  now?: () => Date;
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

/** Starts the provider's sandbox: the open-banking API over mTLS and the SCA pages, sharing one in-memory bank. */
export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  ensureDevCertificates(options.certsDir);
  const read = (file: string) => readFileSync(join(options.certsDir, file));
  const contract = new Psd2Contract();
  const chaos = createOpenBankingChaos(contract);

  // The SCA listener must be up before the bank exists: the bank's links point at its address.
  const holder: { bank?: SandboxBank } = {};
  const sca = createScaServer(() => {
    if (!holder.bank) throw new Error('sandbox bank not ready');
    return holder.bank;
  });
  registerChaosControls(sca, chaos);
  await sca.listen({ host: options.host, port: options.scaPort });
  const scaPort = (sca.server.address() as { port: number }).port;
  const scaUrl = options.scaPublicUrl ?? `http://localhost:${scaPort}`;
  const bank = new SandboxBank({
    scaBaseUrl: scaUrl,
    now: options.now,
    productRules: contract.productRules,
  });
  holder.bank = bank;

  const openBanking = createOpenBankingServer({
    bank,
    contract,
    tls: { key: read('sandbox.key'), cert: read('sandbox.pem'), ca: read('ca.pem') },
  });
  installOpenBankingChaos(openBanking.server, chaos, contract);
  await openBanking.server.listen({ host: options.host, port: options.openBankingPort });
  const obPort = (openBanking.server.server.address() as { port: number }).port;

  return {
    openBankingUrl: `https://localhost:${obPort}`,
    scaUrl,
    bank,
    chaos,
    tlsHandshakes: openBanking.handshakes,
    async close() {
      await Promise.all([openBanking.server.close(), sca.close()]);
    },
  };
}
