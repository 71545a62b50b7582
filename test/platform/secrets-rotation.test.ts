import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { COMMANDS } from '#src/cli/commands.js';
import { SecretsCipher } from '#src/platform/secrets/secrets-cipher.js';
import { SecretsService } from '#src/platform/secrets/secrets.service.js';
import { SecretsResealService } from '#src/platform/secrets/secrets-reseal.service.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { WebhooksService } from '#src/webhooks/webhooks.service.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const newKey = () => randomBytes(32).toString('base64');
const keyIdOf = (key: string) => new SecretsCipher(Buffer.from(key, 'base64')).keyId;

/** Runs a CLI command in process against a gateway's application; its exit code and its lines. */
async function cli(gateway: TestGateway, name: string) {
  const out: string[] = [];
  const code = await COMMANDS[name].run({
    app: gateway.app,
    out: (line) => out.push(line),
    args: { positional: [], options: {} },
  });
  return { code, out: out.join('\n') };
}

const sealedKeyIds = async (gateway: TestGateway) =>
  (
    (await gateway.dataSource.query(
      `SELECT split_part(v, ':', 2) AS key_id, count(*)::int AS n FROM (
         SELECT secret_key_sealed AS v FROM card_credentials
         UNION ALL SELECT public_key_sealed FROM card_credentials WHERE public_key_sealed IS NOT NULL
         UNION ALL SELECT pos_key_sealed FROM card_credentials WHERE pos_key_sealed IS NOT NULL
         UNION ALL SELECT secret_sealed FROM webhook_endpoints) s GROUP BY 1 ORDER BY 1`,
    )) as { key_id: string; n: number }[]
  )
    .map((row) => `${row.key_id}:${row.n}`)
    .sort();

describe('rotating SECRETS_KEY without downtime', () => {
  const k1 = newKey();
  const k2 = newKey();
  let db: OwnDatabase;
  let first: TestGateway;
  const tenants: { tenantId: string; key: string }[] = [];
  const endpoints: { id: string; secret: string }[] = [];
  /** Every gateway of a step talks to the first one's sandbox, where the tenants' merchants are. */
  let shared: Record<string, string>;
  let operator: string;
  /** Each tenant's three merchant keys (the operator's tenant too) and each app's webhook secret. */
  const VALUES = 13 * 3 + 12;

  beforeAll(async () => {
    db = await ownDatabase('secrets');
    first = await start({ DATABASE_URL: db.url, SECRETS_KEY: k1 });
    shared = { DATABASE_URL: db.url, UPSTREAM_CARD_BASE_URL: first.sandbox.cardUrl };
    operator = (await first.newTenantWithKey('operator')).key;
    for (let i = 0; i < 12; i++) {
      const tenant = await first.newTenantWithKey('app');
      tenants.push(tenant);
      const endpoint = await first.app.get(WebhooksService).createEndpoint(tenant.tenantId, {
        url: 'https://example.com/hooks',
        eventTypes: ['card.payment.succeeded'],
      } as never);
      endpoints.push({ id: endpoint.id, secret: endpoint.secret });
    }
    // One endpoint from before secrets were sealed: its secret stored as it is.
    await first.dataSource.query('UPDATE webhook_endpoints SET secret_sealed = $2 WHERE id = $1', [
      endpoints[0].id,
      endpoints[0].secret,
    ]);
  }, 120_000);
  afterAll(async () => {
    for (const gateway of running.splice(0).reverse()) await gateway.close();
    await db?.drop();
  });

  /** Gateways still open, closed at the end whatever happens (the first one last: its sandbox serves all). */
  const running: TestGateway[] = [];
  async function start(env: Record<string, string>) {
    const gateway = await startTestGateway(env);
    running.push(gateway);
    return gateway;
  }
  async function stop(gateway: TestGateway) {
    running.splice(running.indexOf(gateway), 1);
    await gateway.close();
  }

  /** Card calls of every tenant, over and over on each gateway, until `until` settles; their statuses. */
  async function traffic(gateways: TestGateway[], until: Promise<unknown>) {
    const statuses = new Map<number, number>();
    let done = false;
    void until.finally(() => (done = true));
    let rounds = 0;
    do {
      rounds++;
      await Promise.all(
        gateways.flatMap((gateway) =>
          tenants.map(async (tenant) => {
            const answer = await gateway.app.inject({
              method: 'GET',
              url: '/v1/card/payments',
              headers: bearer(tenant.key),
            });
            statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
          }),
        ),
      );
    } while (!done || rounds < 3);
    await until;
    return Object.fromEntries(statuses);
  }

  const webhookSecrets = async (gateway: TestGateway) => {
    const secrets = gateway.app.get(SecretsService);
    const rows = (await gateway.dataSource.query(
      'SELECT id, secret_sealed FROM webhook_endpoints ORDER BY created_at',
    )) as { id: string; secret_sealed: string }[];
    const opened = new Map(
      rows.map((row) => [
        row.id,
        row.secret_sealed.startsWith('whsec_')
          ? row.secret_sealed
          : secrets.open(row.secret_sealed, `webhook-endpoint:${row.id}`),
      ]),
    );
    return endpoints.map((endpoint) => opened.get(endpoint.id) === endpoint.secret);
  };

  it('moves every value to the new key while card calls run on old and new replicas, none refused, then works with the old key retired', async () => {
    expect(await sealedKeyIds(first)).toEqual([`:1`, `${keyIdOf(k1)}:${VALUES - 1}`].sort());

    // Step 1: every replica learns the new key (it opens), the old one still seals.
    // Both read each tenant's row at every call (no key cache): the step-1 replica opens what is re-sealed.
    const learning = await start({
      ...shared,
      SECRETS_KEY: k1,
      SECRETS_KEYS: k2,
      KEY_CACHE_TTL_MS: '0',
    });
    // The first replica leaves the rotation (its sandbox stays: the provider of every step).
    // Step 2: a replica seals with the new key and re-seals the rest, while the step-1 replica serves.
    const rotated = await start({
      ...shared,
      SECRETS_KEY: k2,
      SECRETS_KEYS: k1,
      SECRETS_RESEAL_INTERVAL_MS: '200',
      KEY_CACHE_TTL_MS: '0',
    });
    const reseal = rotated.app.get(SecretsResealService);
    const statuses = await traffic(
      [learning, rotated],
      (async () => {
        for (;;) {
          const report = await reseal.run();
          if (report?.counts.every((count) => count.key === 'current')) return report;
        }
      })(),
    );
    expect(Object.keys(statuses)).toEqual(['200']);
    expect(statuses[200]).toBeGreaterThanOrEqual(3 * 2 * tenants.length);
    expect(await sealedKeyIds(rotated)).toEqual([`${keyIdOf(k2)}:${VALUES}`]);
    expect(await webhookSecrets(learning)).toEqual(endpoints.map(() => true));

    const status = await cli(rotated, 'secrets:reseal');
    expect(status).toEqual({
      code: 0,
      out: expect.stringContaining('the keys of SECRETS_KEYS can be retired'),
    });
    const readiness = await rotated.app.inject({
      method: 'GET',
      url: '/health/ready',
      headers: bearer(operator),
    });
    expect(readiness.json().checks.secrets).toEqual({
      status: 'ok',
      detail: `every sealed value uses SECRETS_KEY (${keyIdOf(k2)})`,
    });
    await stop(learning);
    await stop(rotated);

    // Step 3: the old key retired, the replicas restarted: card calls and webhook secrets still open.
    const retired = await start({ ...shared, SECRETS_KEY: k2 });
    for (const tenant of tenants) {
      const answer = await retired.app.inject({
        method: 'GET',
        url: '/v1/card/payments',
        headers: bearer(tenant.key),
      });
      expect(answer.statusCode).toBe(200);
    }
    expect(await webhookSecrets(retired)).toEqual(endpoints.map(() => true));
    expect((await cli(retired, 'secrets:status')).code).toBe(0);
    await stop(retired);
  }, 180_000);

  it('names a key retired while values still use it: in the log, readiness, the metric and secrets:status', async () => {
    const k3 = newKey();
    // Values sealed with k2 remain; k2 is dropped from the ring too early.
    const early = await start({
      ...shared,
      SECRETS_KEY: k3,
      SECRETS_RESEAL_INTERVAL_MS: '60000',
    });
    const reseal = early.app.get(SecretsResealService);
    const report = await reseal.run();
    expect(report).toMatchObject({
      resealed: 0,
      unopened: VALUES,
      counts: [{ keyId: keyIdOf(k2), key: 'unconfigured', values: VALUES }],
    });
    expect(early.logs.join('\n')).toContain('put it back in SECRETS_KEYS');
    const readiness = await early.app.inject({
      method: 'GET',
      url: '/health/ready',
      headers: bearer(operator),
    });
    expect(readiness.json().checks.secrets).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining(`${keyIdOf(k2)} (${VALUES})`),
    });
    const status = await cli(early, 'secrets:status');
    expect(status.code).toBe(1);
    expect(status.out).toMatch(new RegExp(`${keyIdOf(k2)}\\s+unconfigured\\s+${VALUES}`));
    const metrics = await early.app
      .get(Metrics)
      .registry.getSingleMetricAsString('portico_sealed_values');
    expect(metrics).toContain(
      `portico_sealed_values{key_id="${keyIdOf(k2)}",key="unconfigured"} ${VALUES}`,
    );
    // The card calls of those tenants are refused (503), nothing else is touched.
    const answer = await early.app.inject({
      method: 'GET',
      url: '/v1/card/payments',
      headers: bearer(tenants[0].key),
    });
    expect(answer.statusCode).toBe(503);
    expect(await sealedKeyIds(early)).toEqual([`${keyIdOf(k2)}:${VALUES}`]);
    await stop(early);
  }, 120_000);
});
