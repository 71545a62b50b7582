import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Psd2Contract } from '../shared/contracts/psd2-contract.js';
import { SandboxBank } from './open-banking/bank/sandbox-bank.js';
import { createOpenBankingServer } from './open-banking/open-banking-server.js';
import { createScaServer } from './open-banking/sca-server.js';
import { ensureDevCertificates } from './dev-certificates.js';
import { Chaos } from './chaos/chaos.js';
import { registerChaosControls } from './chaos/chaos-routes.js';
import { installOpenBankingChaos } from './chaos/open-banking-chaos.js';
import { installCardChaos } from './chaos/card-chaos.js';
import { SandboxStateStore } from './persistence/sandbox-state-store.js';
import { CardContract } from '../shared/contracts/card-contract.js';
import { CardSandbox } from './card/card-sandbox.js';
import { createCardServer } from './card/card-server.js';
import { registerCardControls } from './card/card-controls.js';
import type { CardStateKind } from './card/card-state.js';
import { registerCardPages } from './card/card-pages.js';
import { PosContract } from '../shared/contracts/pos-contract.js';
import { startPos, type RunningPos } from './pos/pos-listener.js';
import { registerPosControls } from './pos/pos-controls.js';
import { PosSandbox } from './pos/pos-sandbox.js';
import type { PosStateKind } from './pos/pos-journal.js';
import { logRequests, type SandboxLog } from './request-log.js';

export interface SandboxOptions {
  certsDir: string;
  host: string;
  openBankingPort: number;
  scaPort: number;
  /** Port of the card API (server TLS, Basic auth); default 0, any free port. */
  cardPort?: number;
  /** Port of the POS terminal interface (server TLS, `p_` keys); default 0, any free port. */
  posPort?: number;
  /** How long the POS side holds a payment for the terminal; default the seed's 180 s. */
  posHoldMs?: number;
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
  /** Where a line for each request of the open-banking, card and POS listeners goes; none: not logged. */
  log?: SandboxLog;
}

export interface RunningSandbox {
  /** The open-banking API (mutual TLS), e.g. https://localhost:8443 */
  openBankingUrl: string;
  /** The SCA pages and sandbox controls (plain HTTP). */
  scaUrl: string;
  /** The card API (server TLS, Basic auth with a merchant's keys), e.g. https://localhost:8444 */
  cardUrl: string;
  bank: SandboxBank;
  /** The card side's state, by merchant (provisioning, clock, calls). */
  card: CardSandbox;
  /** The POS terminal interface (`/pos/v1`), e.g. https://localhost:8445 */
  posUrl: string;
  /** The POS side: merchants' POS keys, terminals, transactions (its clock is the card side's). */
  pos: PosSandbox;
  /** Fault injection on both APIs, by operationId; also at /sandbox/chaos on the SCA listener. */
  chaos: Chaos;
  /** TLS handshakes completed on the open-banking listener. */
  tlsHandshakes(): number;
  close(): Promise<void>;
}

interface Stores {
  bank?: SandboxStateStore;
  card?: SandboxStateStore<CardStateKind>;
  pos?: SandboxStateStore<PosStateKind>;
}

/**
 * Starts the provider's sandbox: the open-banking API over mTLS and the SCA pages sharing one bank,
 * and the card API (server TLS) with its merchants; the controls of both on the SCA listener.
 */
export async function startSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  ensureDevCertificates(options.certsDir);
  const contract = Psd2Contract.committed();
  const cardContract = CardContract.committed();
  const stores: Stores = {};
  try {
    if (options.database) {
      stores.bank = await SandboxStateStore.open(options.database.url, options.database.schema);
      stores.card = await SandboxStateStore.open<CardStateKind>(
        options.database.url,
        options.database.schema,
        'card_state',
      );
      stores.pos = await SandboxStateStore.open<PosStateKind>(
        options.database.url,
        options.database.schema,
        'pos_state',
      );
    }
    return await listen(options, contract, cardContract, stores);
  } catch (error) {
    await stores.bank?.close();
    await stores.card?.close();
    await stores.pos?.close();
    throw error;
  }
}

async function listen(
  options: SandboxOptions,
  contract: Psd2Contract,
  cardContract: CardContract,
  stores: Stores,
): Promise<RunningSandbox> {
  const store = stores.bank;
  const read = (file: string) => readFileSync(join(options.certsDir, file));
  const storedState = store ? await store.load() : [];
  const card = new CardSandbox({
    store: stores.card,
    storedState: stores.card ? await stores.card.load() : [],
    now: options.now,
  });
  // One registry for both APIs: operationIds do not overlap, and the same controls reach both.
  const posContract = PosContract.committed();
  const chaos = new Chaos([
    ...contract.operations.map((operation) => operation.operationId),
    ...cardContract.operations.map((operation) => operation.operationId),
    ...posContract.operations.map((operation) => operation.operationId),
  ]);

  // The SCA listener must be up before the bank exists: the bank's links point at its address.
  const holder: { bank?: SandboxBank } = {};
  const sca = createScaServer(() => {
    if (!holder.bank) throw new Error('sandbox bank not ready');
    return holder.bank;
  }, [card]);
  registerChaosControls(sca, chaos);
  const counters = { handshakes: () => 0 };
  sca.get('/sandbox/tls-handshakes', async () => ({ handshakes: counters.handshakes() }));
  registerCardControls(sca, card);
  const cardPages = registerCardPages(sca, card, cardContract);
  const posSandbox = new PosSandbox(posContract, {
    now: () => card.now(),
    holdMs: options.posHoldMs,
    store: stores.pos,
    storedState: stores.pos ? await stores.pos.load() : [],
  });
  registerPosControls(sca, posSandbox);
  await sca.listen({ host: options.host, port: options.scaPort });
  const scaPort = (sca.server.address() as { port: number }).port;
  const scaUrl = options.scaPublicUrl ?? `http://localhost:${scaPort}`;
  card.pages.pagesUrl = scaUrl;
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
    logRequests(openBanking.server, 'open-banking', options.log);
    const cardServer = createCardServer({
      card,
      contract: cardContract,
      tls: { key: read('sandbox.key'), cert: read('sandbox.pem') },
    });
    installCardChaos(cardServer, chaos, cardContract);
    logRequests(cardServer, 'card', options.log);
    let pos: RunningPos | undefined;
    try {
      await openBanking.server.listen({ host: options.host, port: options.openBankingPort });
      await cardServer.listen({ host: options.host, port: options.cardPort ?? 0 });
      pos = await startPos(posSandbox, chaos, posContract, {
        host: options.host,
        port: options.posPort ?? 0,
        tls: { key: read('sandbox.key'), cert: read('sandbox.pem') },
        log: options.log,
      });
    } catch (error) {
      await Promise.all([openBanking.server.close(), cardServer.close()]);
      throw error;
    }
    const posSide = pos;
    const obPort = (openBanking.server.server.address() as { port: number }).port;
    counters.handshakes = openBanking.handshakes;
    const cardPort = (cardServer.server.address() as { port: number }).port;

    return {
      openBankingUrl: `https://localhost:${obPort}`,
      scaUrl,
      cardUrl: `https://localhost:${cardPort}`,
      bank,
      card,
      posUrl: posSide.url,
      pos: posSide.pos,
      chaos,
      tlsHandshakes: openBanking.handshakes,
      async close() {
        cardPages.close();
        await Promise.all([
          openBanking.server.close(),
          cardServer.close(),
          posSide.server.close(),
          sca.close(),
        ]);
        await bank.persisted().catch(() => undefined);
        await card.persisted().catch(() => undefined);
        await store?.close();
        await posSide.pos.persisted().catch(() => undefined);
        await stores.card?.close();
        await stores.pos?.close();
      },
    };
  } catch (error) {
    cardPages.close();
    await sca.close();
    throw error;
  }
}
