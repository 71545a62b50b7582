import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import cluster from 'node:cluster';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { LOGGER } from '../logging/logging.module.js';
import { Metrics } from './metrics.service.js';

export const METRICS_PATH = '/metrics';

/** A running /metrics server. */
export interface MetricsServer {
  /** http://host:port/metrics */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text from `collect`) on its own port, never on the public API
 * port: operators scrape it, apps cannot reach it.
 */
export async function serveMetrics(
  host: string,
  port: number,
  collect: () => Promise<string>,
  logger: Logger,
): Promise<MetricsServer> {
  const plain = (response: ServerResponse, status: number, text: string) => {
    response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    response.end(text);
  };
  const answer = async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) return plain(response, 404, 'not found: scrape /metrics\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      return plain(response, 405, 'method not allowed\n');
    }
    try {
      const text = await collect();
      response.writeHead(200, { 'content-type': Registry.PROMETHEUS_CONTENT_TYPE });
      response.end(request.method === 'HEAD' ? undefined : text);
    } catch (error) {
      logger.error({ err: error }, 'metrics collection failed');
      plain(response, 500, 'metrics collection failed\n');
    }
  };
  const server: Server = createServer((request, response) => void answer(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const shownHost = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const url = `http://${shownHost}:${bound.port}${METRICS_PATH}`;
  logger.info({ url }, 'metrics listener started');
  return {
    url,
    close: async () => {
      // A scraper's kept-alive connection would otherwise hold close() open.
      server.closeIdleConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The gateway's /metrics listener (METRICS_HOST:METRICS_PORT), started once the gateway listens and
 * closed at shutdown. In a worker of several (GATEWAY_WORKERS), the primary serves /metrics, summed
 * over the workers: this process only answers the primary's requests for its own registry.
 */
@Injectable()
export class MetricsListener implements OnApplicationShutdown {
  private server?: MetricsServer;
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
    if (port === undefined || this.url) return this.url;
    if (cluster.isWorker && this.config.metrics.servedByPrimary) {
      // Constructing one installs prom-client's answer to the primary's requests (cluster IPC).
      new AggregatorRegistry();
      AggregatorRegistry.setRegistries([this.metrics.registry]);
      this.url = this.config.metrics.servedByPrimary;
      return this.url;
    }
    this.server = await serveMetrics(
      host,
      port,
      () => this.metrics.registry.metrics(),
      this.logger,
    );
    this.url = this.server.url;
    return this.url;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    await server?.close();
  }
}
