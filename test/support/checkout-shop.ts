import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An app's checkout page: Portico's tokenisation page in a frame, what it posts back shown in the page. */
export interface CheckoutShop {
  url: string;
  close(): Promise<void>;
}

/**
 * The app's own web server: its checkout page asks Portico (server side, with the app key) for the
 * tokenisation settings and embeds Portico's page; the token comes back by postMessage, shown as
 * `token <shown>` (`shown`: a JavaScript expression over the message `event.data`), an error as
 * `code message`.
 */
export async function startCheckoutShop(options: {
  config: () => Promise<{ pageUrl: string; publicKey: string }>;
  gatewayOrigin: string;
  shown: string;
  frameHeight: number;
}): Promise<CheckoutShop> {
  let url = '';
  const shop: Server = createServer((_request, response) => {
    void (async () => {
      const config = await options.config();
      const frame = `${config.pageUrl}?${new URLSearchParams({ publicKey: config.publicKey, origin: url })}`;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>Checkout</title><h1>Checkout</h1>
<iframe id="card-frame" src="${frame}" width="420" height="${options.frameHeight}"></iframe>
<p>Token: <span id="token"></span></p><p>Error: <span id="error"></span></p>
<script>
addEventListener('message', (event) => {
  if (event.origin !== ${JSON.stringify(options.gatewayOrigin)}) return;
  if (event.data.type === 'portico.cardToken') document.getElementById('token').textContent = event.data.token + ' ' + ${options.shown};
  if (event.data.type === 'portico.cardTokenError') document.getElementById('error').textContent = event.data.code + ' ' + event.data.message;
});
</script>`);
    })();
  });
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  return {
    url,
    close: async () => {
      shop.closeAllConnections();
      await new Promise<void>((resolve) => shop.close(() => resolve()));
    },
  };
}
