import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { bearer, startTestGateway, uniqueSlug, type TestGateway } from '../support/test-gateway.js';

describe('roles: operator, tenant admin, app, auditor', () => {
  let sut: TestGateway;
  let operator: string;
  beforeAll(async () => {
    sut = await startTestGateway();
    operator = (await sut.newTenantWithKey('operator')).key;
  });
  afterAll(() => sut.close());

  const call = (
    key: string | undefined,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    sut.app.inject({
      method,
      url,
      headers: key ? bearer(key) : {},
      ...(payload ? { payload } : {}),
    });

  it("answers a tenant admin's every call about another tenant's keys with 404, as if it did not exist", async () => {
    const admin = await sut.newTenantWithKey('admin');
    const other = await sut.newTenantWithKey('app');
    const missing = randomUUID();
    const attempts = (tenantId: string) => [
      call(admin.key, 'GET', `/v1/tenants/${tenantId}/api-keys`),
      call(admin.key, 'POST', `/v1/tenants/${tenantId}/api-keys`, { role: 'app' }),
      call(admin.key, 'DELETE', `/v1/tenants/${tenantId}/api-keys/${other.keyId}`),
    ];
    for (const [tenantId, response] of [
      ...(await Promise.all(attempts(other.tenantId))).map((r) => [other.tenantId, r] as const),
      ...(await Promise.all(attempts(missing))).map((r) => [missing, r] as const),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({
        type: 'urn:portico:problem:not-found',
        detail: `No tenant "${tenantId}"`,
      });
    }
    // Nothing happened to the other tenant: no key issued, its key still works.
    const keys = await call(operator, 'GET', `/v1/tenants/${other.tenantId}/api-keys`);
    expect(keys.json().items).toHaveLength(1);
    expect((await call(other.key, 'GET', '/v1/me')).statusCode).toBe(200);
  });

  it('shows a tenant admin its own tenant only, and refuses it tenant creation', async () => {
    const admin = await sut.newTenantWithKey('admin');
    const listed = await call(admin.key, 'GET', '/v1/tenants');
    expect(listed.statusCode).toBe(200);
    expect(listed.json().items.map((t: { id: string }) => t.id)).toEqual([admin.tenantId]);

    const created = await call(admin.key, 'POST', '/v1/tenants', {
      slug: uniqueSlug('by-admin'),
      name: 'Not allowed',
    });
    expect(created.statusCode).toBe(403);
    expect(created.json()).toMatchObject({
      type: 'urn:portico:problem:forbidden',
      detail: expect.stringContaining('this key has role admin'),
    });
  });

  it("lets a tenant admin issue and revoke its own tenant's app and admin keys", async () => {
    const admin = await sut.newTenantWithKey('admin');
    for (const role of ['app', 'admin']) {
      const issued = await call(admin.key, 'POST', `/v1/tenants/${admin.tenantId}/api-keys`, {
        role,
      });
      expect(issued.statusCode).toBe(201);
      expect(issued.json()).toMatchObject({ tenantId: admin.tenantId, role });
      const key = issued.json().key as string;
      expect((await call(key, 'GET', '/v1/me')).json()).toMatchObject({ role });
      const revoked = await call(
        admin.key,
        'DELETE',
        `/v1/tenants/${admin.tenantId}/api-keys/${issued.json().id}`,
      );
      expect(revoked.statusCode).toBe(204);
      expect((await call(key, 'GET', '/v1/me')).statusCode).toBe(401);
    }
  });

  it('refuses a tenant admin auditor and operator keys, even for its own tenant', async () => {
    const admin = await sut.newTenantWithKey('admin');
    for (const role of ['auditor', 'operator']) {
      const response = await call(admin.key, 'POST', `/v1/tenants/${admin.tenantId}/api-keys`, {
        role,
      });
      expect(response.statusCode).toBe(403);
      expect(response.json()).toMatchObject({
        type: 'urn:portico:problem:forbidden',
        detail: expect.stringContaining(`${role} keys are the operator's`),
      });
    }
    const keys = await call(admin.key, 'GET', `/v1/tenants/${admin.tenantId}/api-keys`);
    expect(keys.json().items.map((k: { role: string }) => k.role)).toEqual(['admin']);

    // An operator key that lives in the admin's tenant is still not the admin's to revoke.
    const { apiKey } = await sut.tenants.issueKey(admin.tenantId, 'operator');
    const revoke = await call(
      admin.key,
      'DELETE',
      `/v1/tenants/${admin.tenantId}/api-keys/${apiKey.id}`,
    );
    expect(revoke.statusCode).toBe(403);
  });

  it('lets an operator create tenants, list them all, and issue any role for any tenant', async () => {
    const slug = uniqueSlug('by-operator');
    const created = await call(operator, 'POST', '/v1/tenants', { slug, name: 'By operator' });
    expect(created.statusCode).toBe(201);
    const tenantId = created.json().id as string;
    const existing = await sut.newTenantWithKey('app');
    const listed = (await call(operator, 'GET', '/v1/tenants'))
      .json()
      .items.map((t: { id: string }) => t.id);
    expect(listed).toEqual(expect.arrayContaining([tenantId, existing.tenantId]));

    for (const role of ['app', 'admin', 'auditor', 'operator']) {
      const issued = await call(operator, 'POST', `/v1/tenants/${tenantId}/api-keys`, { role });
      expect(issued.statusCode).toBe(201);
      expect((await call(issued.json().key, 'GET', '/v1/me')).json()).toMatchObject({
        tenantSlug: slug,
        role,
      });
    }
    const revoked = await call(
      operator,
      'DELETE',
      `/v1/tenants/${existing.tenantId}/api-keys/${existing.keyId}`,
    );
    expect(revoked.statusCode).toBe(204);
  });

  it.each(['app', 'auditor'])('refuses tenants and keys to a %s key', async (role) => {
    const { key, tenantId } = await sut.newTenantWithKey(role as 'app' | 'auditor');
    for (const [method, url] of [
      ['GET', '/v1/tenants'],
      ['GET', `/v1/tenants/${tenantId}/api-keys`],
    ] as const)
      expect((await call(key, method, url)).statusCode).toBe(403);
  });

  it('answers readiness without a key with its status only; certificate details are for an operator', async () => {
    const anonymous = await call(undefined, 'GET', '/health/ready');
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.json()).toEqual({ status: 'ok' });
    expect(anonymous.body).not.toMatch(/PSDGR|daysToExpiry|certificate/);

    for (const role of ['app', 'admin', 'auditor'] as const) {
      const { key } = await sut.newTenantWithKey(role);
      expect((await call(key, 'GET', '/health/ready')).json()).toEqual({ status: 'ok' });
    }

    const detailed = await call(operator, 'GET', '/health/ready');
    expect(detailed.json()).toMatchObject({
      status: 'ok',
      checks: {
        database: { status: 'ok' },
        certificate: { daysToExpiry: expect.any(Number) },
      },
    });
    expect(detailed.json().checks.certificate.detail).toContain('PSDGR-BOG-123456');

    const wrongKey = await call(`${operator.slice(0, -4)}AAAA`, 'GET', '/health/ready');
    expect(wrongKey.statusCode).toBe(401);
    expect(wrongKey.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
