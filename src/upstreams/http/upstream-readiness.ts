import { withinMs } from '#src/platform/common/time-limit.js';
import type { CheckResult } from '#src/platform/health/readiness-report.js';
import type { UpstreamTransport } from './upstream-transport.js';

/** How long an upstream's last probe stands for it (a load balancer probes every few seconds). */
const PROBE_INTERVAL_MS = 30_000;
/** The longest a probe waits: readiness must answer while an upstream hangs. */
const PROBE_TIMEOUT_MS = 5000;

export interface UpstreamProbe {
  /** What is asked (`GET /brands`), for the check's detail. */
  label: string;
  /** Sends the probe and resolves with the HTTP status the upstream answered. */
  send(): Promise<number>;
  /** Whether that status shows the upstream serving (an unauthenticated probe's 401 does). */
  serving(status: number): boolean;
}

/**
 * An upstream's readiness check: the probe's outcome, remembered for PROBE_INTERVAL_MS. An upstream
 * that does not answer is `warn`, never `fail`: taking the replica out would not bring it back.
 */
export function upstreamReadinessCheck(probe: UpstreamProbe): () => Promise<CheckResult> {
  let last: { at: number; result: Promise<CheckResult> } | undefined;
  const run = async (): Promise<CheckResult> => {
    const started = performance.now();
    try {
      const status = await withinMs(probe.send(), PROBE_TIMEOUT_MS);
      const ms = Math.round(performance.now() - started);
      return probe.serving(status)
        ? { status: 'ok', detail: `${probe.label} answered ${status} in ${ms} ms` }
        : { status: 'warn', detail: `${probe.label} answered ${status}` };
    } catch (error) {
      return {
        status: 'warn',
        detail: `${probe.label}: ${String((error as Error)?.message ?? error)}`.slice(0, 500),
      };
    }
  };
  return () => {
    const now = Date.now();
    if (!last || now - last.at >= PROBE_INTERVAL_MS) last = { at: now, result: run() };
    return last.result;
  };
}

/** A probe of an API that authenticates each call: any HTTP answer (401 included) shows it serving. */
export function reachabilityProbe(transport: UpstreamTransport, path = '/'): UpstreamProbe {
  return {
    label: `GET ${path}`,
    send: async () => (await transport.send({ method: 'GET', path })).status,
    serving: (status) => status < 500,
  };
}
