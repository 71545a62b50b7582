import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs certs/make-dev-certs.sh (jest runs from the repository root) and returns what it printed. */
export function makeDevCerts(...args: string[]): string {
  return execFileSync('bash', ['certs/make-dev-certs.sh', ...args], { encoding: 'utf8' });
}

/** A fresh temporary directory holding a full set of development certificates. */
export function freshDevCerts(): string {
  const dir = mkdtempSync(join(tmpdir(), 'portico-certs-'));
  makeDevCerts(dir);
  return dir;
}

export function removeDir(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

export function readIn(dir: string, file: string): string {
  return readFileSync(join(dir, file), 'utf8');
}

/**
 * Issues one more certificate from a CA in `dir` (`issuer`.pem/.key) with the given openssl extension
 * section, for shapes the script does not make (intermediates, odd qcStatements).
 */
export function issueCertificate(
  dir: string,
  name: string,
  options: { issuer: string; subject: string; extensions: string },
): void {
  const path = (suffix: string): string => join(dir, `${name}${suffix}`);
  writeFileSync(path('.cnf'), `[ext]\n${options.extensions}\n`);
  execFileSync(
    'openssl',
    ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path('.key')],
    { stdio: 'pipe' },
  );
  execFileSync(
    'openssl',
    ['req', '-new', '-key', path('.key'), '-subj', options.subject, '-out', path('.csr')],
    { stdio: 'pipe' },
  );
  execFileSync(
    'openssl',
    [
      'x509',
      '-req',
      '-in',
      path('.csr'),
      '-CA',
      join(dir, `${options.issuer}.pem`),
      '-CAkey',
      join(dir, `${options.issuer}.key`),
      '-set_serial',
      String(Date.now()),
      '-days',
      '30',
      '-extfile',
      path('.cnf'),
      '-extensions',
      'ext',
      '-out',
      path('.pem'),
    ],
    { stdio: 'pipe' },
  );
}
