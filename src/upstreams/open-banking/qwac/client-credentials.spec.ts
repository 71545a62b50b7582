import { describe, expect, it } from '@jest/globals';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ClientCredentials } from './client-credentials.js';

const CERTS = resolve('certs/dev');

/** A copy of the development QWAC in a folder of its own, so that a test can renew it in place. */
function renewable(): { dir: string; renew(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'portico-credentials-'));
  for (const file of ['tpp.pem', 'tpp.key', 'ca.pem'])
    copyFileSync(join(CERTS, file), join(dir, file));
  return {
    dir,
    renew() {
      copyFileSync(join(CERTS, 'tpp-ai.pem'), join(dir, 'tpp.pem'));
      copyFileSync(join(CERTS, 'tpp-ai.key'), join(dir, 'tpp.key'));
    },
  };
}

const filesIn = (dir: string) => ({
  certFile: join(dir, 'tpp.pem'),
  keyFile: join(dir, 'tpp.key'),
  caFile: join(dir, 'ca.pem'),
  clientCaFile: join(dir, 'ca.pem'),
});

describe('the client certificate read again from disk', () => {
  it('takes a renewed certificate once recheckMs has passed since the last look, not before', () => {
    const { dir, renew } = renewable();
    const sut = new ClientCredentials(filesIn(dir), undefined, 1000);
    const first = sut.current(10_000);
    renew();
    expect(sut.current(10_999)).toBe(first);
    const renewed = sut.current(11_000);
    expect(renewed.version).toBe(first.version + 1);
    expect(renewed.info.roles).toEqual(['PSP_AI']);
    expect(first.info.roles).toEqual(expect.arrayContaining(['PSP_AI', 'PSP_PI']));
  });

  it('looks at every call with recheckMs 0', () => {
    const { dir, renew } = renewable();
    const sut = new ClientCredentials(filesIn(dir), undefined, 0);
    const first = sut.current(10_000);
    renew();
    expect(sut.current(10_000).version).toBe(first.version + 1);
  });
});
