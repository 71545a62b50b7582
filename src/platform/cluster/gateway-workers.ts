import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { AppConfig } from '../config/app-config.js';
import { serveMetrics, type MetricsServer } from '../metrics/metrics-listener.js';

/** The variable through which a primary gives its workers the configuration it resolved. */
const WORKER_CONFIG = 'PORTICO_WORKER_CONFIG';
/** Which worker this is (0 … N-1): a replacement keeps the index of the one it replaces. */
const WORKER_INDEX = 'PORTICO_WORKER_INDEX';
const READY = 'portico:worker-ready';
/** Set for the first start of worker 0 only: it prepares the start-up banner (issuing the sandbox keys). */
const WORKER_BANNER = 'PORTICO_WORKER_BANNER';

/** A worker that dies this soon after its start, again and again, stops the restarts. */
const QUICK_DEATH_MS = 10_000;
const QUICK_DEATHS_ALLOWED = 5;

export interface WorkerRole {
  /** 0 … N-1. */
  index: number;
  /** Whether this worker prepares the banner's lines (the first start of worker 0). */
  banner: boolean;
  /** The configuration the primary resolved (the embedded engine's address, the sandbox's). */
  config: AppConfig;
}

/** This process's role when it is a gateway worker started by a primary, else undefined. */
export function workerRole(): WorkerRole | undefined {
  if (!cluster.isWorker) return undefined;
  const config = process.env[WORKER_CONFIG];
  if (!config) return undefined;
  return {
    index: Number(process.env[WORKER_INDEX]),
    banner: process.env[WORKER_BANNER] === '1',
    config: JSON.parse(config) as AppConfig,
  };
}

/** Tells the primary that this worker listens, with the banner's lines when it prepared them. */
export function announceReady(bannerLines?: string[]): void {
  process.send?.({ type: READY, bannerLines });
}

export interface Primary {
  /** Resolves when every worker listens, with the banner's lines worker 0 prepared. */
  ready: Promise<string[]>;
  metricsUrl?: string;
  /** Stops the workers (SIGTERM, then SIGKILL after the shutdown timeout) and the metrics listener. */
  stop(): Promise<void>;
}

/**
 * Runs `config.http.workers` gateway workers (Node's cluster module) that share the API port: the
 * primary hands each new connection to one of them, in turn. It serves /metrics summed over the
 * workers and restarts a worker that dies, unless the worker died before it ever listened (then the
 * failure is the configuration's, and `onFatal` is told), or workers keep dying at once.
 */
export async function startWorkers(
  config: AppConfig,
  logger: Logger,
  onFatal: (reason: string) => void,
): Promise<Primary> {
  let metrics: MetricsServer | undefined;
  if (config.metrics.port !== undefined) {
    const aggregator = new AggregatorRegistry();
    metrics = await serveMetrics(
      config.metrics.host,
      config.metrics.port,
      () => aggregator.clusterMetrics(),
      logger,
    );
  }
  const workerConfig: AppConfig = {
    ...config,
    metrics: { ...config.metrics, servedByPrimary: metrics?.url },
  };
  const env = { [WORKER_CONFIG]: JSON.stringify(workerConfig) };
  let stopping = false;
  let quickDeaths = 0;
  const readyOnes = new Set<number>();
  let bannerLines: string[] = [];
  let allReady!: (lines: string[]) => void;
  const ready = new Promise<string[]>((resolve) => (allReady = resolve));

  const fork = (index: number, first: boolean): Worker => {
    const started = Date.now();
    const banner = first && index === 0 ? '1' : '0';
    const worker = cluster.fork({ ...env, [WORKER_INDEX]: String(index), [WORKER_BANNER]: banner });
    let listening = false;
    worker.on('message', (message: { type?: string; bannerLines?: string[] }) => {
      if (message?.type !== READY) return;
      listening = true;
      if (message.bannerLines) bannerLines = message.bannerLines;
      readyOnes.add(index);
      if (readyOnes.size === config.http.workers) allReady(bannerLines);
    });
    worker.on('exit', (code, signal) => {
      if (stopping) return;
      if (!listening)
        return onFatal(`gateway worker ${index} exited during start-up (${signal ?? code})`);
      quickDeaths = Date.now() - started < QUICK_DEATH_MS ? quickDeaths + 1 : 0;
      if (quickDeaths > QUICK_DEATHS_ALLOWED)
        return onFatal(`gateway workers keep dying (worker ${index}: ${signal ?? code})`);
      logger.error(
        { worker: index, pid: worker.process.pid, code, signal },
        'gateway worker died; starting another',
      );
      fork(index, false);
    });
    return worker;
  };
  for (let index = 0; index < config.http.workers; index++) fork(index, true);

  return {
    ready,
    metricsUrl: metrics?.url,
    stop: async () => {
      stopping = true;
      const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
      await Promise.all(
        workers.map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (worker.isDead()) return resolve();
              const force = setTimeout(
                () => worker.process.kill('SIGKILL'),
                config.http.shutdownTimeoutMs + 2000,
              );
              worker.once('exit', () => {
                clearTimeout(force);
                resolve();
              });
              worker.process.kill('SIGTERM');
            }),
        ),
      );
      await metrics?.close();
    },
  };
}
