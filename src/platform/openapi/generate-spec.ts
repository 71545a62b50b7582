import { loadConfig } from '../config/app-config.js';
import { createGateway, gatewayOpenApiDocument } from '#src/gateway.js';
import { createLogger } from '../logging/logger.js';
import { serializeOpenApiDocument } from './openapi-document.js';

/** The facade's spec as committed: built in preview mode (no database, no network) from default configuration. */
export async function generateGatewaySpec(): Promise<string> {
  const app = await createGateway(loadConfig({}), createLogger('silent'), { preview: true });
  try {
    return serializeOpenApiDocument(gatewayOpenApiDocument(app));
  } finally {
    await app.close();
  }
}
