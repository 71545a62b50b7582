import {
  ClientCredentials,
  type TlsFiles,
} from '#src/upstreams/open-banking/qwac/client-credentials.js';
import { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';

/** The development certificate files for one TPP certificate (tpp, tpp-ai, tpp-noroles, …). */
export function devTlsFiles(dir: string, name: string, caFile = `${dir}/ca.pem`): TlsFiles {
  return {
    certFile: `${dir}/${name}.pem`,
    keyFile: `${dir}/${name}.key`,
    caFile,
    clientCaFile: `${dir}/ca.pem`,
  };
}

/** The production transport, as the gateway builds it, towards a given base URL. */
export function transportTo(
  baseUrl: string,
  files: TlsFiles,
  overrides: Partial<ConstructorParameters<typeof UpstreamTransport>[0]> = {},
  /** How often the files are looked at (UPSTREAM_CLIENT_CERT_RECHECK_MS); 0: at every call. */
  recheckMs?: number,
): UpstreamTransport {
  const credentials = new ClientCredentials(files, undefined, recheckMs);
  return new UpstreamTransport({
    name: 'open-banking',
    baseUrl,
    tls: { current: () => credentials.current() },
    connectTimeoutMs: 2000,
    headersTimeoutMs: 2000,
    bodyTimeoutMs: 2000,
    poolConnections: 4,
    keepAliveTimeoutMs: 30_000,
    ...overrides,
  });
}
