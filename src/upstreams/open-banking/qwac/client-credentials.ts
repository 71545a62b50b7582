import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AppConfig } from '#src/platform/config/app-config.js';
import { readPkcs12 } from './pkcs12.js';
import { readCertificate, type CertificateInfo } from '#src/shared/qwac/qwac-reader.js';

export interface TlsFiles {
  /** PEM certificate (and chain) and key, or instead a PKCS#12 file holding both. */
  certFile?: string;
  keyFile?: string;
  p12File?: string;
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
  const caFile = config.upstreams.openBanking.qwac.caFile ?? (sandbox ? dev('ca.pem') : undefined);
  const p12File = config.upstreams.openBanking.qwac.p12File;
  const certFile = p12File
    ? undefined
    : (config.upstreams.openBanking.qwac.certFile ?? (sandbox ? dev('tpp.pem') : undefined));
  const keyFile = p12File
    ? undefined
    : (config.upstreams.openBanking.qwac.keyFile ?? (sandbox ? dev('tpp.key') : undefined));
  // loadConfig already refuses production mode without these.
  if (!caFile || !(p12File || (certFile && keyFile)))
    throw new Error('upstream TLS files are not configured');
  return {
    certFile,
    keyFile,
    p12File,
    keyPassphrase: config.upstreams.openBanking.qwac.keyPassphrase,
    caFile,
    clientCaFile: config.upstreams.openBanking.qwac.clientCaFile ?? caFile,
  };
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

/** Where reloads are reported (the app's pino logger). */
export interface CredentialsLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * The client certificate, its key and the CA bundles, read from disk and read again when a file
 * changes (looked at no more often than `recheckMs`, UPSTREAM_CLIENT_CERT_RECHECK_MS), so that a renewed certificate needs no restart.
 * Files that changed but cannot be used (half written, wrong passphrase, corrupt) are reported once
 * and not read again until they change once more; the previous material stays in use meanwhile.
 */
export class ClientCredentials {
  private material: TlsMaterial;
  private fingerprint: string;
  private failedFingerprint?: string;
  private lastCheck = 0;
  /** Why the files on disk were not taken, while the previous material stays in use. */
  private problem?: string;

  constructor(
    readonly files: TlsFiles,
    private readonly logger?: CredentialsLogger,
    private readonly recheckMs = 1000,
  ) {
    this.fingerprint = this.statFingerprint();
    this.material = this.load(1);
  }

  /** The current material; reloads it first when a file changed since the last look. */
  current(now = Date.now()): TlsMaterial {
    if (now - this.lastCheck >= this.recheckMs) {
      this.lastCheck = now;
      this.reloadIfChanged();
    }
    return this.material;
  }

  /** Set while the files on disk changed into something that cannot be used; cleared by the next good read. */
  reloadProblem(): string | undefined {
    return this.problem;
  }

  /** Reloads when a file changed; returns whether it did. Unusable files keep the old material. */
  reloadIfChanged(): boolean {
    const fingerprint = this.statFingerprint();
    if (fingerprint === this.fingerprint || fingerprint === this.failedFingerprint) return false;
    try {
      this.material = this.load(this.material.version + 1);
    } catch (error) {
      this.failedFingerprint = fingerprint;
      this.problem = `the client certificate files changed but cannot be used (${(error as Error).message}); the previous certificate stays in use`;
      this.logger?.warn({ problem: this.problem }, 'client certificate not reloaded');
      return false;
    }
    this.fingerprint = fingerprint;
    this.failedFingerprint = undefined;
    this.problem = undefined;
    const { info, version } = this.material;
    this.logger?.info(
      { subject: info.subject, daysToExpiry: info.daysToExpiry, version },
      'client certificate reloaded',
    );
    return true;
  }

  private statFingerprint(): string {
    return [
      this.files.certFile,
      this.files.keyFile,
      this.files.p12File,
      this.files.caFile,
      this.files.clientCaFile,
    ]
      .map((file) => {
        if (!file) return '-';
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
    const { cert, key } = this.files.p12File
      ? readPkcs12(this.files.p12File, this.files.keyPassphrase)
      : {
          cert: readFileSync(this.files.certFile as string),
          key: readFileSync(this.files.keyFile as string),
        };
    return {
      cert,
      key,
      // A key taken out of PKCS#12 is held decrypted in memory.
      passphrase: this.files.p12File ? undefined : this.files.keyPassphrase,
      ca: readFileSync(this.files.caFile),
      clientCa: readFileSync(this.files.clientCaFile),
      info: readCertificate(cert),
      version,
    };
  }
}
