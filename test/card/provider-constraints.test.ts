import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

describe("the provider's constraints, checked by the facade before calling it", () => {
  let sut: TestGateway;
  let app: { tenantId: string; key: string };
  beforeAll(async () => {
    sut = await startTestGateway();
    app = await sut.newTenantWithKey('app');
  });
  afterAll(() => sut.close());

  const link = (expirationDate: string) =>
    sut.app.inject({
      method: 'POST',
      url: '/v1/card/notifications',
      headers: bearer(app.key),
      payload: {
        payeeName: 'Eleni Georgiou',
        payeeEmail: 'eleni@example.com',
        payeePhone: '+306900000001',
        amount: 2500,
        description: 'Invoice 12',
        expirationDate,
      },
    });
  const calls = async () =>
    (
      (await sut.dataSource.query(
        `SELECT count(*)::int AS n FROM access_log WHERE tenant_id = $1 AND operation = 'createNotification'`,
        [app.tenantId],
      )) as { n: number }[]
    )[0].n;

  it("refuses a notification's expirationDate less than 5 minutes ahead, naming the field and the earliest date, without calling the provider", async () => {
    const soon = await link(new Date(Date.now() + 60_000).toISOString());
    expect(soon.statusCode).toBe(400);
    const problem = soon.json<{ type: string; errors: { field: string; reason: string }[] }>();
    expect(problem.type).toBe('urn:portico:problem:validation-failed');
    expect(problem.errors).toEqual([
      {
        field: 'expirationDate',
        reason: expect.stringMatching(/at least 5 minutes .* \d{4}-\d{2}-\d{2}T.*Z or later$/),
      },
    ]);
    expect(await calls()).toBe(0);
    const earliest = /(\d{4}-\S+Z) or later$/.exec(problem.errors[0].reason)![1];

    const taken = await link(new Date(Date.parse(earliest) + 1000).toISOString());
    expect(taken.statusCode).toBe(201);
    expect(taken.json()).toMatchObject({ status: 'Pending', expirationDate: expect.any(String) });
    expect(await calls()).toBe(1);
  });
});
