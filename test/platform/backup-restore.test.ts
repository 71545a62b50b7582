import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { COMMANDS } from '#src/cli/commands.js';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { signingKeyOf } from '#src/audit/trail/audit-signing-key.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { backupEmbedded, backupPostgres, restoreEmbedded } from '#src/platform/database/backup.js';
import { startEmbeddedPostgres } from '#src/platform/database/embedded/embedded-postgres.js';
import { InDoubtResolver } from '#src/platform/in-doubt/in-doubt-settlers.js';
import { approvedConsent } from '../support/consent-flow.js';
import { ownDatabase } from '../support/own-database.js';
import { createBankConsent } from '../support/sandbox-api.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

const onPostgres = Boolean(process.env.DATABASE_URL);

/** A database to back up and a fresh one to restore into, on the engine the tests run on. */
interface Engines {
  sourceUrl: string;
  backup(file: string): Promise<number>;
  /** Restores the backup into a fresh database; its URL. */
  restore(file: string): Promise<string>;
  close(): Promise<void>;
}

async function postgresEngines(): Promise<Engines> {
  const source = await ownDatabase('backup');
  const target = await ownDatabase('restored', { empty: true });
  return {
    sourceUrl: source.url,
    backup: (file) => backupPostgres(source.url, file),
    async restore(file) {
      await promisify(execFile)('pg_restore', ['--no-owner', '--dbname', target.url, file]);
      return target.url;
    },
    async close() {
      await source.drop();
      await target.drop();
    },
  };
}

async function embeddedEngines(dir: string): Promise<Engines> {
  const sourceDir = join(dir, 'source');
  const source = await startEmbeddedPostgres(sourceDir);
  let restored: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  return {
    sourceUrl: source.url,
    backup: (file) => backupEmbedded(sourceDir, file),
    async restore(file) {
      await restoreEmbedded(file, join(dir, 'restored'));
      restored = await startEmbeddedPostgres(join(dir, 'restored'));
      return restored.url;
    },
    async close() {
      await restored?.stop();
      await source.stop();
    },
  };
}

// A backup taken while the gateway serves, restored into a fresh database: the chain verifies with its
// signed checkpoints, keys authenticate, merchant keys open, and a row in doubt is settled.
describe(`backup and restore (${onPostgres ? 'PostgreSQL: pg_dump -Fc, pg_restore' : 'embedded engine: backup, restore'})`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'portico-backup-'));
  const gateways: TestGateway[] = [];
  let engines: Engines | undefined;
  afterAll(async () => {
    for (const gateway of gateways.reverse()) await gateway.close();
    await engines?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('restores a backup taken under traffic into a fresh database that verifies, authenticates and settles its rows in doubt', async () => {
    engines = onPostgres ? await postgresEngines() : await embeddedEngines(dir);
    const signingPem = generateKeyPairSync('ed25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const keys = {
      SECRETS_KEY: randomBytes(32).toString('base64'),
      AUDIT_SIGNING_KEY: signingPem,
      AUDIT_SEAL_INTERVAL_MS: '0',
      AUDIT_SEAL_GRACE_MS: '0',
    };
    const source = await startTestGateway({ ...keys, DATABASE_URL: engines.sourceUrl });
    gateways.push(source);
    const app = await source.newTenantWithKey('app');
    await approvedConsent(source, app.key);
    await source.app.get(AccessLogService).flushCompletions();
    const checkpoint = await source.app.get(AuditChainService).checkpoint();
    // A consent created at the bank whose answer never came back: in doubt.
    const tpp = transportTo(source.sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
    const created = await createBankConsent(tpp);
    await tpp.close();
    const inDoubt = randomUUID();
    await source.dataSource.query(
      `INSERT INTO consents (id, tenant_id, kind, brand_id, upstream_consent_id, requested_access, status, redirect_uri, created_at)
       VALUES ($1, $2, 'ais', 'danube-bank', $3, '{}', 'unknown', 'https://app.example/r', now() - interval '1 minute')`,
      [inDoubt, app.tenantId, created.body?.consentId],
    );

    // The backup is taken while card calls run.
    const file = join(dir, onPostgres ? 'portico.dump' : 'portico.tar.gz');
    const cardCall = (gateway: TestGateway) =>
      gateway.app.inject({ method: 'GET', url: '/v1/card/payments', headers: bearer(app.key) });
    const [bytes, ...answers] = await Promise.all([
      engines.backup(file),
      ...Array.from({ length: 8 }, () => cardCall(source)),
    ]);
    expect(bytes).toBeGreaterThan(1000);
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 200));

    const restored = await startTestGateway({
      ...keys,
      DATABASE_URL: await engines.restore(file),
      UPSTREAM_OB_BASE_URL: source.sandbox.openBankingUrl,
      UPSTREAM_CARD_BASE_URL: source.sandbox.cardUrl,
    });
    gateways.push(restored);

    const report = await restored.app.get(AuditVerifierService).verify();
    expect(report).toMatchObject({
      ok: true,
      firstBreak: null,
      checkpoints: {
        latest: { seq: checkpoint, keyId: signingKeyOf(signingPem).keyId },
      },
    });
    // The app's API key authenticates, and its merchant keys open: a card call answers.
    expect((await cardCall(restored)).statusCode).toBe(200);
    const status = await COMMANDS['secrets:status'].run({
      app: restored.app,
      out: () => undefined,
      args: { positional: [], options: {} },
    });
    expect(status).toBe(0);
    // The row in doubt in the backup is settled by the resolver against the bank.
    await restored.app.get(InDoubtResolver).resolveOnce();
    const [row] = (await restored.dataSource.query('SELECT status FROM consents WHERE id = $1', [
      inDoubt,
    ])) as { status: string }[];
    expect(row.status).toBe('received');
  }, 240_000);
});
