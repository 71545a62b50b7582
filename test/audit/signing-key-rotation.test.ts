import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMANDS } from '#src/cli/commands.js';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { signingKeyOf } from '#src/audit/trail/audit-signing-key.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { checkpointStatement } from '#src/audit/trail/chain-hash.js';
import { approvedConsent } from '../support/consent-flow.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { bearer, startTestGateway, type TestGateway } from '../support/test-gateway.js';

const newSigningKey = () =>
  generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

// The audit signing key is replaced mid-chain: the checkpoints of both keys verify end to end.
describe('rotating the audit signing key', () => {
  const oldKey = signingKeyOf(newSigningKey());
  const newKey = signingKeyOf(newSigningKey());
  const dir = mkdtempSync(join(tmpdir(), 'portico-audit-keys-'));
  const trustedFile = join(dir, 'retired.pem');
  writeFileSync(trustedFile, oldKey.publicKeyPem);
  let db: OwnDatabase;
  let auditor: string;
  const opened: TestGateway[] = [];
  const chainEnv = (signingKey: string, extra: Record<string, string> = {}) => ({
    DATABASE_URL: db.url,
    AUDIT_SEAL_INTERVAL_MS: '0',
    AUDIT_SEAL_GRACE_MS: '0',
    AUDIT_SIGNING_KEY: signingKey,
    ...extra,
  });
  async function start(env: Record<string, string>) {
    const gateway = await startTestGateway(env);
    opened.push(gateway);
    return gateway;
  }
  /** Trail rows (a consent's status changes, reads), sealed, and the head signed: the checkpoint's link. */
  async function writeAndSign(gateway: TestGateway): Promise<string> {
    const { key } = await gateway.newTenantWithKey('app');
    await approvedConsent(gateway, key);
    await gateway.app.get(AccessLogService).flushCompletions();
    return (await gateway.app.get(AuditChainService).checkpoint()) as string;
  }

  beforeAll(async () => {
    db = await ownDatabase('auditkeys');
  });
  afterAll(async () => {
    const unchecked = 'its last step slips in a checkpoint signed by a key nobody trusts';
    for (const gateway of opened.reverse()) await gateway.close({ unchecked });
    await db?.drop();
  });

  it('verifies a chain signed by the old key, then the new one, while the old one is trusted; names the old checkpoint once it is not', async () => {
    const before = await start(
      chainEnv(oldKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
    );
    auditor = (await before.newTenantWithKey('auditor')).key;
    const oldCheckpoint = await writeAndSign(before);
    expect((await before.app.get(AuditVerifierService).verify()).firstBreak).toBeNull();

    // The new key signs from now on; the old one is listed as retired.
    const newPem = newKey.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const after = await start(chainEnv(newPem, { AUDIT_TRUSTED_KEYS_FILE: trustedFile }));
    const newCheckpoint = await writeAndSign(after);
    const report = await after.app.get(AuditVerifierService).verify();
    expect(report).toMatchObject({
      ok: true,
      firstBreak: null,
      checkpoints: { count: 2, latest: { seq: newCheckpoint, keyId: newKey.keyId } },
    });
    const keysBySeq = (await after.dataSource.query(
      'SELECT seq::text, key_id FROM audit_checkpoints ORDER BY seq',
    )) as { seq: string; key_id: string }[];
    expect(keysBySeq).toEqual([
      { seq: oldCheckpoint, key_id: oldKey.keyId },
      { seq: newCheckpoint, key_id: newKey.keyId },
    ]);
    const out: string[] = [];
    const code = await COMMANDS['audit:verify'].run({
      app: after.app,
      out: (line) => out.push(line),
      args: { positional: [], options: {} },
    });
    expect(code).toBe(0);
    expect(out.join('\n')).toContain(`latest ${newCheckpoint} signed`);
    // An auditor gets every key that verifies, to check the signatures outside Portico.
    const listed = await after.app.inject({
      method: 'GET',
      url: '/v1/audit/checkpoints',
      headers: bearer(auditor),
    });
    expect(listed.json()).toMatchObject({
      publicKeyPem: newKey.publicKeyPem,
      trustedKeys: [
        { keyId: newKey.keyId, publicKeyPem: newKey.publicKeyPem },
        { keyId: oldKey.keyId, publicKeyPem: oldKey.publicKeyPem },
      ],
    });

    // The retired key forgotten: its checkpoint is a break that names it.
    const forgetful = await start(chainEnv(newPem));
    expect((await forgetful.app.get(AuditVerifierService).verify()).firstBreak).toMatchObject({
      problem: 'checkpoint-unknown-key',
      seq: oldCheckpoint,
      detail: expect.stringContaining(
        `names key ${oldKey.keyId}, which is not trusted (${newKey.keyId})`,
      ),
    });
  }, 120_000);

  it('finds a checkpoint signed by a key nobody trusts, slipped in at the head', async () => {
    const gateway = opened[1];
    const forger = signingKeyOf(newSigningKey());
    const { key } = await gateway.newTenantWithKey('app');
    await approvedConsent(gateway, key);
    await gateway.app.get(AccessLogService).flushCompletions();
    await gateway.app.get(AuditChainService).seal();
    const [head] = (await gateway.dataSource.query(
      'SELECT seq::text AS seq, chain_hash FROM audit_chain ORDER BY seq DESC LIMIT 1',
    )) as { seq: string; chain_hash: string }[];
    const signedAt = new Date();
    await gateway.dataSource.query(
      'INSERT INTO audit_checkpoints (seq, chain_hash, signed_at, key_id, signature) VALUES ($1, $2, $3, $4, $5)',
      [
        head.seq,
        head.chain_hash,
        signedAt,
        forger.keyId,
        sign(
          null,
          Buffer.from(checkpointStatement(head.seq, head.chain_hash, signedAt)),
          forger.privateKey,
        ).toString('base64'),
      ],
    );
    const report = await gateway.app.get(AuditVerifierService).verify();
    expect(report.ok).toBe(false);
    expect(report.firstBreak).toMatchObject({
      problem: 'checkpoint-unknown-key',
      seq: head.seq,
      detail: expect.stringContaining(forger.keyId),
    });
  }, 60_000);
});
