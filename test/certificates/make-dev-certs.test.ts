import { X509Certificate } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freshDevCerts, makeDevCerts, readIn, removeDir } from './dev-certs.js';

const EXPECTED_FILES = [
  'ca',
  'sandbox',
  'tpp',
  'tpp-noroles',
  'tpp-ai',
  'tpp-expired',
  'tpp-rogue',
].flatMap((name) => [`${name}.pem`, `${name}.key`]);

function snapshot(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((file) => [file, readIn(dir, file)]));
}

describe('certs/make-dev-certs.sh', () => {
  let dir: string;
  beforeAll(() => {
    dir = freshDevCerts();
  });
  afterAll(() => removeDir(dir));

  it('creates exactly the CA, sandbox, TPP and negative-test certificates with their keys, and no temporary files', () => {
    expect(readdirSync(dir).sort()).toEqual([...EXPECTED_FILES].sort());
  });

  it('writes private keys readable by the owner only', () => {
    for (const file of EXPECTED_FILES.filter((name) => name.endsWith('.key'))) {
      expect({ file, mode: statSync(join(dir, file)).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    }
  });

  it('makes a CA certificate and a sandbox server certificate for localhost, 127.0.0.1 and ::1 signed by it', () => {
    const ca = new X509Certificate(readIn(dir, 'ca.pem'));
    const server = new X509Certificate(readIn(dir, 'sandbox.pem'));
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.checkHost('localhost')).toBe('localhost');
    expect(server.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(server.checkIP('::1')).toBe('::1');
    expect(server.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
  });

  it('does nothing on a second run: prints nothing and leaves every file unchanged', () => {
    const before = snapshot(dir);
    expect(makeDevCerts(dir)).toBe('');
    expect(snapshot(dir)).toEqual(before);
  });

  it('recreates every file with --force, printing one line per file', () => {
    const before = snapshot(dir);
    const output = makeDevCerts('--force', dir);
    expect(output.trim().split('\n')).toHaveLength(EXPECTED_FILES.length);
    const after = snapshot(dir);
    for (const file of EXPECTED_FILES)
      expect({ file, changed: after[file] !== before[file] }).toEqual({ file, changed: true });
  });
});
