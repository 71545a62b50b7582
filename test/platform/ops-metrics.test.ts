import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { load } from 'js-yaml';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { parseSamples, sampleValue } from '../support/prometheus.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

/** The metric names a PromQL expression reads (the gateway's and the process's, not Prometheus's `up`). */
const metricNames = (expr: string) => [
  ...new Set([...expr.matchAll(/\b(?:portico|process|nodejs)_[a-zA-Z0-9_]+/g)].map((m) => m[0])),
];

interface Panel {
  title?: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

const dashboard = JSON.parse(readFileSync('ops/grafana/portico.json', 'utf8')) as {
  panels: Panel[];
  templating: { list: { query?: string | { query: string } }[] };
};
const rules = (
  load(readFileSync('ops/prometheus/alerts.yml', 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  }
).groups.flatMap((group) => group.rules);

/** Every expression of the dashboard (panels, rows' panels, template queries) and of the alert rules. */
function expressions(): { where: string; expr: string }[] {
  const panels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  return [
    ...panels(dashboard.panels).flatMap((panel) =>
      (panel.targets ?? []).map((target) => ({
        where: `dashboard: ${panel.title}`,
        expr: target.expr,
      })),
    ),
    ...dashboard.templating.list
      .map((variable) =>
        typeof variable.query === 'object' ? variable.query.query : (variable.query ?? ''),
      )
      .filter((query) => query.includes('('))
      .map((expr) => ({ where: 'dashboard: a variable', expr })),
    ...rules.map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })),
  ];
}

/** The names a scrape shows: each family's, and a histogram's _bucket, _sum and _count. */
function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

describe('the shipped dashboard and alert rules', () => {
  let gateway: TestGateway;
  let scrape: () => Promise<string>;
  beforeAll(async () => {
    gateway = await startTestGateway();
    scrape = () => gateway.app.get(Metrics).registry.metrics();
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('name only metrics the gateway exports', async () => {
    const exported = exportedNames(await scrape());
    const all = expressions();
    expect(all.length).toBeGreaterThan(30);
    const unknown = all.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !exported.has(name))
        .map((name) => `${where}: ${name}`),
    );
    expect(unknown).toEqual([]);
    // Every expression reads at least one of them (or Prometheus's own `up` of the portico job).
    expect(
      all.filter(
        ({ expr }) => metricNames(expr).length === 0 && !/\bup\{job="portico"\}/.test(expr),
      ),
    ).toEqual([]);
  });

  it('export the database pool with its size limit', async () => {
    const text = await scrape();
    expect(sampleValue(text, 'portico_db_pool_connections', { state: 'max' })).toBe(
      gateway.config.database.poolSize,
    );
  });

  it('export when the client certificate expires', async () => {
    const validTo = new Date(new X509Certificate(readFileSync('certs/dev/tpp.pem')).validTo);
    expect(sampleValue(await scrape(), 'portico_client_certificate_expiry_timestamp_seconds')).toBe(
      validTo.getTime() / 1000,
    );
  });

  it('count the webhook endpoints paused', async () => {
    const paused = async () =>
      sampleValue(await scrape(), 'portico_webhook_endpoints_paused') as number;
    const { tenantId } = await gateway.newTenantWithKey('app');
    const before = await paused();
    const [{ id }] = (await gateway.dataSource.query(
      `INSERT INTO webhook_endpoints (tenant_id, url, secret_sealed, paused_at)
       VALUES ($1, 'https://receiver.example/hooks', 'sealed', now()) RETURNING id`,
      [tenantId],
    )) as { id: string }[];
    try {
      expect(await paused()).toBe(before + 1);
    } finally {
      await gateway.dataSource.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
    }
    expect(await paused()).toBe(before);
  });

  it('count the rows in doubt and the oldest one’s age', async () => {
    const inDoubt = async () =>
      parseSamples(await scrape()).filter((s) => s.name.startsWith('portico_in_doubt_'));
    const total = (samples: Awaited<ReturnType<typeof inDoubt>>) =>
      samples.filter((s) => s.name === 'portico_in_doubt_rows').reduce((n, s) => n + s.value, 0);
    const { tenantId } = await gateway.newTenantWithKey('app');
    const before = await inDoubt();
    expect(before.map((s) => s.labels.kind)).toContain('payments');
    const [{ id }] = (await gateway.dataSource.query(
      `INSERT INTO payments (tenant_id, brand_id, payment_product, details, status, redirect_uri, created_at)
       VALUES ($1, 'danube-bank', 'sepa-credit-transfers', '{}', 'unknown', 'https://app.example/back',
               now() - interval '2 hours') RETURNING id`,
      [tenantId],
    )) as { id: string }[];
    try {
      const after = await inDoubt();
      expect(total(after)).toBe(total(before) + 1);
      const oldest = after.find(
        (s) => s.name === 'portico_in_doubt_oldest_seconds' && s.labels.kind === 'payments',
      );
      expect(oldest?.value).toBeGreaterThanOrEqual(7200);
    } finally {
      await gateway.dataSource.query('DELETE FROM payments WHERE id = $1', [id]);
    }
  });

  it('show the rows of the audit trail not sealed yet, by kind', async () => {
    const text = await scrape();
    for (const kind of ['access_log', 'status_change']) {
      expect(sampleValue(text, 'portico_audit_unsealed_rows', { kind })).toBeGreaterThanOrEqual(0);
      expect(
        sampleValue(text, 'portico_audit_unsealed_oldest_seconds', { kind }),
      ).toBeGreaterThanOrEqual(0);
    }
  });
});
