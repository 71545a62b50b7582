import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LOGGER } from '../logging/logging.module.js';
import { Metrics } from './metrics.service.js';

export const METRICS_PATH = '/metrics';

/**
 * Serves `GET /metrics` on its own port (METRICS_HOST:METRICS_PORT), never on the public API port:
 * operators scrape it, apps cannot reach it. Started once the gateway listens, closed at shutdown.
 */
@Injectable()
export class MetricsListener implements OnApplicationShutdown {
  private server?: Server;
  /** http://host:port/metrics once started. */
  url?: string;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly metrics: Metrics,
  ) {}

  /** Starts listening unless METRICS_PORT=off; returns the address scraped, if any. */
  async start(): Promise<string | undefined> {
    const { host, port } = this.config.metrics;
    if (port === undefined || this.server) return this.url;
    const server = createServer((request, response) => void this.answer(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    const bound = server.address() as AddressInfo;
    const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
    this.url = `http://${shownHost}:${bound.port}${METRICS_PATH}`;
    this.logger.info({ url: this.url }, 'metrics listener started');
    return this.url;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    // A scraper's kept-alive connection would otherwise hold close() open.
    server.closeIdleConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) return this.plain(response, 404, 'not found: scrape /metrics\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return this.plain(response, 405, 'method not allowed\n');
    }
    try {
      const text = await this.metrics.registry.metrics();
      response.writeHead(200, { 'content-type': this.metrics.registry.contentType });
      response.end(request.method === 'HEAD' ? undefined : text);
    } catch (error) {
      this.logger.error({ err: error }, 'metrics collection failed');
      this.plain(response, 500, 'metrics collection failed\n');
    }
  }

  private plain(response: ServerResponse, status: number, text: string): void {
    response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    response.end(text);
  }
}
