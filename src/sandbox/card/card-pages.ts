import type { FastifyInstance } from 'fastify';
import type { CardContract } from '#src/shared/contracts/card-contract.js';
import type { CardSandbox } from './card-sandbox.js';
import { IrisMessenger } from './iris/iris-delivery.js';
import { registerIrisControls } from './iris/iris-controls.js';
import { registerIrisPages } from './iris/iris-pages.js';
import { registerHostedPaymentPage } from './notifications/hosted-page.js';
import { registerOutboxControl } from './notifications/outbox-control.js';
import { registerWalletPages } from './wallets/wallet-pages.js';
import { registerTdsPages } from './tds/tds-pages.js';

/**
 * The card side's browser pages and their controls on the page listener (card.yaml part 2): the
 * hosted payment page of notifications, the bank page of IRIS sessions with the callback and
 * webhook it sends. close() stops webhooks still waiting.
 */
export function registerCardPages(
  server: FastifyInstance,
  card: CardSandbox,
  contract: CardContract,
): { close(): void } {
  const messenger = new IrisMessenger();
  registerHostedPaymentPage(server, card, contract);
  registerOutboxControl(server, card);
  registerIrisPages(server, card, messenger);
  registerIrisControls(server, card, messenger);
  registerWalletPages(server, card);
  registerTdsPages(server, card);
  return { close: () => messenger.close() };
}
