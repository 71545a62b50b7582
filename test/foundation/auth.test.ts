import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { hashKey } from '#src/access/tenants/api-key-secret.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe('API keys and roles', () => {
  let sut: TestGateway;
  beforeAll(async () => {
    sut = await startTestGateway();
  });
  afterAll(() => sut.close());

  it('stores only the hash of an issued key, never the key', async () => {
    const { key, keyId } = await sut.newTenantWithKey('app');
    const [row] = await sut.dataSource.query('SELECT * FROM api_keys WHERE id = $1', [keyId]);
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice('ptk_12345678_'.length));
    expect(row.secret_hash).toBe(hashKey(key));
  });

  it('refuses a call without a key with 401 problem+json and a Bearer challenge', async () => {
    const response = await sut.app.inject({ method: 'GET', url: '/v1/me' });
    expect(response.statusCode).toBe(401);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(response.json()).toMatchObject({
      status: 401,
      title: 'Unauthorized',
      instance: '/v1/me',
      type: 'urn:portico:problem:unauthenticated',
    });
  });

  it('refuses an unknown key, a malformed header and a revoked key with 401', async () => {
    const { key, keyId } = await sut.newTenantWithKey('app');
    const unknown = `${key.slice(0, -4)}AAAA`;
    expect(
      (await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(unknown) })).statusCode,
    ).toBe(401);
    expect(
      (await sut.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: key } }))
        .statusCode,
    ).toBe(401);
    expect(
      (await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode,
    ).toBe(200);
    await sut.tenants.revokeKey(keyId);
    const revoked = await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    expect(revoked.statusCode).toBe(401);
    expect(revoked.json().detail).toMatch(/unknown or revoked/);
  });

  it('answers who the caller is for every role', async () => {
    for (const role of ['app', 'auditor', 'admin', 'operator'] as const) {
      const { key, tenantId, slug } = await sut.newTenantWithKey(role);
      const response = await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ tenantId, tenantSlug: slug, role });
    }
  });

  it.each(['app', 'auditor'] as const)(
    'refuses admin operations to a %s key with 403',
    async (role) => {
      const { key } = await sut.newTenantWithKey(role);
      const response = await sut.app.inject({
        method: 'GET',
        url: '/v1/tenants',
        headers: bearer(key),
      });
      expect(response.statusCode).toBe(403);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json().detail).toContain(`this key has role ${role}`);
    },
  );

  it('lets an operator key create a tenant, issue a key that works, and revoke it', async () => {
    const operator = await sut.newTenantWithKey('operator');
    const slug = `created-${Date.now()}`;
    const created = await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: bearer(operator.key),
      payload: { slug, name: 'Created by operator' },
    });
    expect(created.statusCode).toBe(201);
    const tenantId = created.json().id;
    const issued = await sut.app.inject({
      method: 'POST',
      url: `/v1/tenants/${tenantId}/api-keys`,
      headers: bearer(operator.key),
      payload: { role: 'app', label: 'backend' },
    });
    expect(issued.statusCode).toBe(201);
    const newKey = issued.json().key as string;
    expect(
      (await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(newKey) })).json(),
    ).toMatchObject({ tenantSlug: slug, role: 'app' });
    const listed = await sut.app.inject({
      method: 'GET',
      url: `/v1/tenants/${tenantId}/api-keys`,
      headers: bearer(operator.key),
    });
    expect(listed.json().items).toHaveLength(1);
    expect(JSON.stringify(listed.json())).not.toContain(newKey);
    const revoked = await sut.app.inject({
      method: 'DELETE',
      url: `/v1/tenants/${tenantId}/api-keys/${issued.json().id}`,
      headers: bearer(operator.key),
    });
    expect(revoked.statusCode).toBe(204);
    expect(
      (await sut.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(newKey) })).statusCode,
    ).toBe(401);
  });

  it('answers 409 for a duplicate tenant slug', async () => {
    const operator = await sut.newTenantWithKey('operator');
    const payload = { slug: `dup-${Date.now()}`, name: 'Dup' };
    expect(
      (
        await sut.app.inject({
          method: 'POST',
          url: '/v1/tenants',
          headers: bearer(operator.key),
          payload,
        })
      ).statusCode,
    ).toBe(201);
    const again = await sut.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: bearer(operator.key),
      payload,
    });
    expect(again.statusCode).toBe(409);
    expect(again.json().type).toBe('urn:portico:problem:conflict');
  });
});
