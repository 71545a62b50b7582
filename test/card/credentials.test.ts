import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { CardCredentialsService } from '#src/access/merchant-credentials/card-credentials.service.js';
import {
  SecretsCipher,
  SecretsKeyRing,
  parseSecretsKey,
} from '#src/platform/secrets/secrets-cipher.js';
import { COMMANDS } from '#src/cli/commands.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const secretKey = () => `sk_test_${randomBytes(12).toString('hex')}`;
const publicKey = () => `pk_test_${randomBytes(12).toString('hex')}`;

describe('card merchant keys per tenant', () => {
  let sut: TestGateway;
  let operator: string;
  beforeAll(async () => {
    sut = await startTestGateway({ SECRETS_KEY: randomBytes(32).toString('base64') });
    operator = (await sut.newTenantWithKey('operator')).key;
  });
  afterAll(() => sut.close());

  const put = (key: string, tenantId: string, payload: object) =>
    sut.app.inject({
      method: 'PUT',
      url: `/v1/tenants/${tenantId}/card-credentials`,
      headers: bearer(key),
      payload,
    });
  const get = (key: string, tenantId: string) =>
    sut.app.inject({
      method: 'GET',
      url: `/v1/tenants/${tenantId}/card-credentials`,
      headers: bearer(key),
    });

  it('stores the keys an operator sets encrypted, answers them masked, and opens them only for the provider', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const keys = { secretKey: secretKey(), publicKey: publicKey() };
    const set = await put(operator, tenant.tenantId, keys);
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({
      tenantId: tenant.tenantId,
      secretKey: `sk_…${keys.secretKey.slice(-4)}`,
      publicKey: `pk_…${keys.publicKey.slice(-4)}`,
      posKey: null,
      source: 'operator',
    });
    expect(set.body).not.toContain(keys.secretKey);
    expect((await get(operator, tenant.tenantId)).json()).toEqual(set.json());

    const [row] = (await sut.dataSource.query(
      'SELECT to_jsonb(c)::text AS text FROM card_credentials c WHERE tenant_id = $1',
      [tenant.tenantId],
    )) as { text: string }[];
    expect(row.text).not.toContain(keys.secretKey.slice(3));
    expect(row.text).not.toContain(keys.publicKey.slice(3));
    expect(row.text).toMatch(/"secret_key_sealed": "v1:[0-9a-f]{8}:/);

    expect(await sut.app.get(CardCredentialsService).keysOf(tenant.tenantId)).toEqual({
      ...keys,
      posKey: undefined,
    });
    expect(sut.logs.join('\n')).not.toContain(keys.secretKey.slice(3));
  });

  it('keeps the keys a tenant has when provisioning must not replace them (two starts at once)', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const credentials = sut.app.get(CardCredentialsService);
    const first = { secretKey: secretKey(), publicKey: publicKey() };
    await credentials.set(tenant.tenantId, first, 'operator', 'm1');
    const kept = await credentials.set(
      tenant.tenantId,
      { secretKey: secretKey() },
      'sandbox',
      'm2',
      true,
    );
    expect(kept).toMatchObject({ merchantId: 'm1', source: 'operator' });
    expect((await credentials.keysOf(tenant.tenantId)).secretKey).toBe(first.secretKey);
  });

  it('lets only an operator set keys, shows a tenant admin its own masked, and another tenant 404', async () => {
    const admin = await sut.newTenantWithKey('admin');
    const other = await sut.newTenantWithKey('app');
    const keys = { secretKey: secretKey(), publicKey: publicKey() };
    expect((await put(admin.key, admin.tenantId, keys)).statusCode).toBe(403);
    expect((await put(other.key, other.tenantId, keys)).statusCode).toBe(403);
    expect((await put(operator, admin.tenantId, keys)).statusCode).toBe(200);
    expect((await put(operator, other.tenantId, keys)).statusCode).toBe(200);
    const own = await get(admin.key, admin.tenantId);
    expect(own.statusCode).toBe(200);
    expect(own.json().secretKey).toBe(`sk_…${keys.secretKey.slice(-4)}`);
    expect((await get(admin.key, other.tenantId)).statusCode).toBe(404);
  });

  it('refuses a key without its prefix by field name, and never echoes it', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const wrong = `pk_test_${randomBytes(12).toString('hex')}`;
    const answer = await put(operator, tenant.tenantId, { secretKey: wrong, publicKey: wrong });
    expect(answer.statusCode).toBe(400);
    expect(answer.json().errors).toEqual([{ field: 'secretKey', reason: expect.any(String) }]);
    expect(answer.body).not.toContain(wrong);
  });

  it('sets keys from the CLI, printing them masked', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const keys = { secretKey: secretKey(), publicKey: publicKey() };
    const out: string[] = [];
    const code = await COMMANDS['card:credentials:set'].run({
      app: sut.app,
      out: (line) => out.push(line),
      args: {
        positional: [tenant.slug],
        options: { 'secret-key': keys.secretKey, 'public-key': keys.publicKey },
      },
    });
    expect(code).toBe(0);
    expect(out.join('\n')).toContain(`secret sk_…${keys.secretKey.slice(-4)}`);
    expect(out.join('\n')).not.toContain(keys.secretKey);
    expect((await get(operator, tenant.tenantId)).json().secretKey).toBe(
      `sk_…${keys.secretKey.slice(-4)}`,
    );
  });

  it('answers a clear 503 when the keys were sealed with another SECRETS_KEY, and opens them again once set anew', async () => {
    const tenant = await sut.newTenantWithKey('app');
    const other = new SecretsCipher(randomBytes(32));
    const keys = { secretKey: secretKey(), publicKey: publicKey() };
    expect((await put(operator, tenant.tenantId, keys)).statusCode).toBe(200);
    await sut.dataSource.query(
      'UPDATE card_credentials SET secret_key_sealed = $2 WHERE tenant_id = $1',
      [tenant.tenantId, other.seal(secretKey(), `${tenant.tenantId}:secretKey`)],
    );
    const refused = await sut.app.inject({
      method: 'GET',
      url: '/v1/card/payments',
      headers: bearer(tenant.key),
    });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({
      type: 'urn:portico:problem:card-credentials-unreadable',
      status: 503,
    });
    // Set anew under the configured key: the next call opens them (the replica drops what it held).
    expect((await put(operator, tenant.tenantId, keys)).statusCode).toBe(200);
    expect(await sut.app.get(CardCredentialsService).keysOf(tenant.tenantId)).toEqual({
      ...keys,
      posKey: undefined,
    });
  });

  it("does not open a sealed key moved to another tenant's row, nor under another key", () => {
    const cipher = new SecretsCipher(randomBytes(32));
    const sealed = cipher.seal('sk_test_abcdef', 'tenant-a:secretKey');
    expect(cipher.open(sealed, 'tenant-a:secretKey')).toBe('sk_test_abcdef');
    expect(() => cipher.open(sealed, 'tenant-b:secretKey')).toThrow();
    expect(() => new SecretsCipher(randomBytes(32)).open(sealed, 'tenant-a:secretKey')).toThrow(
      /another SECRETS_KEY/,
    );
    expect(() => parseSecretsKey('too-short')).toThrow(/32 bytes/);
  });

  it('seals with the current key of a ring and opens with any key of it, picked by the key id the value names', () => {
    const previous = new SecretsCipher(randomBytes(32));
    const sut = new SecretsKeyRing(new SecretsCipher(randomBytes(32)), [previous]);
    const old = previous.seal('sk_test_old', 'tenant-a:secretKey');
    expect(sut.open(old, 'tenant-a:secretKey')).toBe('sk_test_old');
    const sealed = sut.seal('sk_test_new', 'tenant-a:secretKey');
    expect(sealed.split(':')[1]).toBe(sut.current.keyId);
    expect(() => previous.open(sealed, 'tenant-a:secretKey')).toThrow(/another SECRETS_KEY/);
    expect(() => new SecretsKeyRing(sut.current).open(old, 'tenant-a:secretKey')).toThrow(
      `key id ${previous.keyId}, configured ${sut.current.keyId}`,
    );
  });
});
