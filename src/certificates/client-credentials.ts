import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '../config/app-config.js';
import { readCertificate, type CertificateInfo } from './qwac-reader.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  keyPassphrase?: string;
  /** CAs of the upstream's server certificate. */
  caFile: string;
  /** CAs the client certificate must chain to. */
  clientCaFile: string;
}

/** Where the client certificate and CA bundles come from: configuration, or the development certificates in sandbox mode. */
export function upstreamTlsFiles(config: AppConfig): TlsFiles {
  const dev = (file: string) => join(config.sandbox.certsDir, file);
  const sandbox = config.mode === 'sandbox';
  const caFile = config.upstream.caFile ?? (sandbox ? dev('ca.pem') : undefined);
  const certFile = config.upstream.clientCertFile ?? (sandbox ? dev('tpp.pem') : undefined);
  const keyFile = config.upstream.clientKeyFile ?? (sandbox ? dev('tpp.key') : undefined);
  // loadConfig already refuses production mode without these.
  if (!caFile || !certFile || !keyFile) throw new Error('upstream TLS files are not configured');
  return { certFile, keyFile, keyPassphrase: config.upstream.clientKeyPassphrase, caFile, clientCaFile: config.upstream.clientCaFile ?? caFile };
}

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  passphrase?: string;
  ca: Buffer;
  clientCa: Buffer;
  info: CertificateInfo;
  /** Changes whenever any of the files changes on disk. */
  version: number;
}

const RECHECK_INTERVAL_MS = 1000;

/**
 * The client certificate, its key and the CA bundles, read from disk and read again when a file
 * changes (checked at most once a second), so that a renewed certificate needs no restart.
 */
export class ClientCredentials {
  private material: TlsMaterial;
  private fingerprint: string;
  private lastCheck = 0;

  constructor(readonly files: TlsFiles) {
    this.fingerprint = this.statFingerprint();
    this.material = this.load(1);
  }

  /** The current material; reloads it first when a file changed since the last look. */
  current(now = Date.now()): TlsMaterial {
    if (now - this.lastCheck >= RECHECK_INTERVAL_MS) {
      this.lastCheck = now;
      this.reloadIfChanged();
    }
    return this.material;
  }

  /** Reloads when a file changed; returns whether it did. A half-written file keeps the old material. */
  reloadIfChanged(): boolean {
    const fingerprint = this.statFingerprint();
    if (fingerprint === this.fingerprint) return false;
    try {
      this.material = this.load(this.material.version + 1);
      this.fingerprint = fingerprint;
      return true;
    } catch {
      return false;
    }
  }

  private statFingerprint(): string {
    return [this.files.certFile, this.files.keyFile, this.files.caFile, this.files.clientCaFile]
      .map((file) => {
        try {
          const stat = statSync(file);
          return `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
        } catch {
          return 'missing';
        }
      })
      .join('|');
  }

  private load(version: number): TlsMaterial {
    const cert = readFileSync(this.files.certFile);
    const key = readFileSync(this.files.keyFile);
    return {
      cert,
      key,
      passphrase: this.files.keyPassphrase,
      ca: readFileSync(this.files.caFile),
      clientCa: readFileSync(this.files.clientCaFile),
      info: readCertificate(cert),
      version,
    };
  }
}
