import type { TLSSocket } from 'node:tls';
import { CertificateError, readCertificate, type Psd2Role } from '#src/shared/qwac/qwac-reader.js';

export interface TppIdentity {
  tppId: string;
  roles: Psd2Role[];
}

const identities = new WeakMap<TLSSocket, TppIdentity | null>();

function toPem(der: Buffer): string {
  return `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
}

/** Who is calling, from the client certificate of the TLS connection (parsed once per connection). */
export function tppIdentityOf(socket: TLSSocket): TppIdentity | null {
  const cached = identities.get(socket);
  if (cached !== undefined) return cached;
  let identity: TppIdentity | null = null;
  const peer = socket.getPeerCertificate(false);
  if (peer?.raw) {
    try {
      const info = readCertificate(toPem(peer.raw));
      identity = {
        tppId: info.organizationIdentifier ?? info.fingerprintSha256,
        roles: info.roles,
      };
    } catch (error) {
      if (!(error instanceof CertificateError)) throw error;
    }
  }
  identities.set(socket, identity);
  return identity;
}
