import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { AccessLogService } from '#src/audit/trail/access-log.service.js';
import { AuditChainService } from '#src/audit/trail/audit-chain.service.js';
import { AuditVerifierService } from '#src/audit/trail/audit-verifier.service.js';
import { eventually } from '../support/chaos.js';
import { linkHash } from '#src/audit/trail/chain-hash.js';
import { approvedConsent } from '../support/consent-flow.js';
import { porticoClient } from '../support/inject-fetch.js';
import { ownDatabase, type OwnDatabase } from '../support/own-database.js';
import { posCall, posTenant, terminals } from '../support/pos-gateway.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

// The audit trail is sealed into one hash chain; whoever edits the database directly is found out.
describe('the tamper-evident audit chain', () => {
  let database: OwnDatabase;
  let gateway: TestGateway;
  let second: TestGateway;
  const chainEnv = (url: string) => ({
    DATABASE_URL: url,
    AUDIT_SEAL_INTERVAL_MS: '50',
    AUDIT_SEAL_GRACE_MS: '0',
    AUDIT_CHECKPOINT_INTERVAL_MS: '0',
    UPSTREAM_DEADLINE_MS: '2000',
  });
  beforeAll(async () => {
    database = await ownDatabase('chain');
    gateway = await startTestGateway(chainEnv(database.url));
    second = await startTestGateway({
      ...chainEnv(database.url),
      UPSTREAM_OB_BASE_URL: gateway.sandbox.openBankingUrl,
    });
  }, 120_000);
  afterAll(async () => {
    const unchecked = 'its chain is tampered with on purpose (a row slipped in is left)';
    await second?.close({ unchecked });
    await gateway?.close({ unchecked });
    await database?.drop();
  });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    gateway.dataSource.query(text, params) as Promise<T[]>;
  /** What someone with database access does: triggers off for the length of one transaction. */
  const tamper = (statements: [string, unknown[]?][]) =>
    gateway.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL session_replication_role = replica`);
      for (const [text, params] of statements) await manager.query(text, params ?? []);
    });
  const sealed = async () => {
    await gateway.app.get(AuditChainService).seal();
    return gateway.app.get(AuditVerifierService).verify();
  };
  const linkOf = async (kind: string, id: string) =>
    String(
      (
        await sql<{ seq: string }>(
          `SELECT seq FROM audit_chain WHERE entry_kind = $1 AND entry_id = $2`,
          [kind, id],
        )
      )[0].seq,
    );

  it('chains the writes of two gateway processes into one chain without gaps or forks', async () => {
    const { key } = await gateway.newTenantWithKey('app');
    const { consentId, accountId } = await approvedConsent(gateway, key);
    const read = (target: TestGateway) =>
      porticoClient(target, key).GET('/v1/accounts/{accountId}/balances', {
        params: {
          path: { accountId },
          header: { 'Consent-ID': consentId, 'PSU-IP-Address': '192.0.2.1' },
        },
      });
    // Both replicas write the trail and both run their sealer (every 50 ms) while they do.
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        for (let n = 0; n < 10; n++)
          expect((await read(i % 2 ? second : gateway)).response.status).toBe(200);
      }),
    );
    // Answered reads complete their rows after the answer (a `sent` row waits to be sealed): both
    // replicas write theirs before the chain is sealed and counted.
    for (const replica of [gateway, second])
      await replica.app.get(AccessLogService).flushCompletions();
    const report = await sealed();
    expect(report.firstBreak).toBeNull();
    const [counts] = await sql<{
      rows: number;
      links: number;
      distinct_links: number;
      max_seq: number;
    }>(
      `SELECT (SELECT count(*) FROM access_log)::int + (SELECT count(*) FROM status_changes)::int AS rows,
              (SELECT count(*) FROM audit_chain)::int AS links,
              (SELECT count(DISTINCT (entry_kind, entry_id)) FROM audit_chain)::int AS distinct_links,
              (SELECT max(seq) FROM audit_chain)::int AS max_seq`,
    );
    expect(counts.links).toBe(counts.rows);
    expect(counts.distinct_links).toBe(counts.links);
    expect(counts.max_seq).toBe(counts.links);
    expect(report.links).toBe(counts.links);
  });

  it('finds an edited, a deleted and a reordered row at its own link, and verifies again once undone', async () => {
    const [a] = await sql<{ id: string; outcome: string }>(
      `SELECT id, outcome FROM access_log ORDER BY id LIMIT 1 OFFSET 5`,
    );
    // A later call at another instant (the embedded engine's clock can give two rows the same one), so
    // that swapping their times changes both rows.
    const [b] = await sql<{ id: string }>(
      `SELECT id FROM access_log
        WHERE id > $1 AND created_at <> (SELECT created_at FROM access_log WHERE id = $1)
        ORDER BY id LIMIT 1`,
      [a.id],
    );

    await tamper([
      [`UPDATE access_log SET outcome = 'refused:CONSENT_INVALID' WHERE id = $1`, [a.id]],
    ]);
    let report = await sealed();
    expect(report.firstBreak).toMatchObject({
      problem: 'row-edited',
      seq: await linkOf('access_log', a.id),
      entryKind: 'access_log',
      entryId: String(a.id),
    });
    await tamper([[`UPDATE access_log SET outcome = $2 WHERE id = $1`, [a.id, a.outcome]]]);
    expect((await sealed()).firstBreak).toBeNull();

    // The row kept exactly (microseconds included), to put it back.
    const [copy] = await sql<{ id: string; row: string }>(
      `SELECT id, to_jsonb(s)::text AS row FROM status_changes s ORDER BY id LIMIT 1 OFFSET 2`,
    );
    await tamper([[`DELETE FROM status_changes WHERE id = $1`, [copy.id]]]);
    report = await sealed();
    expect(report.firstBreak).toMatchObject({
      problem: 'row-deleted',
      seq: await linkOf('status_change', String(copy.id)),
    });
    await tamper([
      [
        `INSERT INTO status_changes SELECT * FROM jsonb_populate_record(NULL::status_changes, $1::jsonb)`,
        [copy.row],
      ],
    ]);
    expect((await sealed()).firstBreak).toBeNull();

    // Two calls swap places in time: the earlier of the two links is where the chain breaks.
    const swap = () =>
      tamper([
        [
          `UPDATE access_log x SET created_at = y.created_at FROM access_log y
           WHERE (x.id, y.id) IN (($1::bigint, $2::bigint), ($2::bigint, $1::bigint))`,
          [a.id, b.id],
        ],
      ]);
    await swap();
    report = await sealed();
    const [first] = [await linkOf('access_log', a.id), await linkOf('access_log', b.id)].sort(
      (x, y) => Number(x) - Number(y),
    );
    expect(report.firstBreak).toMatchObject({ problem: 'row-edited', seq: first });
    await swap();
    expect((await sealed()).firstBreak).toBeNull();
  });

  it('finds a rewritten link, and a chain rewritten consistently from an edited row by the signed checkpoint', async () => {
    const chain = gateway.app.get(AuditChainService);
    const checkpointSeq = await chain.checkpoint();
    expect(checkpointSeq).toBeDefined();
    let report = await sealed();
    expect(report.firstBreak).toBeNull();
    expect(report.checkpoints.latest?.seq).toBe(checkpointSeq);

    const [link] = await sql<{ seq: string; chain_hash: string }>(
      `SELECT seq, chain_hash FROM audit_chain WHERE seq = 4`,
    );
    await tamper([[`UPDATE audit_chain SET chain_hash = $2 WHERE seq = $1`, [4, 'f'.repeat(64)]]]);
    report = await sealed();
    expect(report.firstBreak).toMatchObject({ problem: 'link-altered', seq: '4' });
    await tamper([[`UPDATE audit_chain SET chain_hash = $2 WHERE seq = $1`, [4, link.chain_hash]]]);
    expect((await sealed()).firstBreak).toBeNull();

    // An attacker edits a row and recomputes every hash after it: only the signature gives it away.
    const [row] = await sql<{ id: string; outcome: string }>(
      `SELECT id, outcome FROM access_log ORDER BY id LIMIT 1 OFFSET 2`,
    );
    const seq = await linkOf('access_log', row.id);
    const rewrite = (outcome: string) =>
      gateway.dataSource.transaction(async (manager) => {
        await manager.query(`SET LOCAL TimeZone = 'UTC'`);
        await manager.query(`SET LOCAL session_replication_role = replica`);
        await manager.query(`UPDATE access_log SET outcome = $2 WHERE id = $1`, [row.id, outcome]);
        const [{ hash }] = await manager.query(
          `SELECT encode(sha256(convert_to(jsonb_strip_nulls(to_jsonb(a))::text, 'UTF8')), 'hex') AS hash FROM access_log a WHERE id = $1`,
          [row.id],
        );
        await manager.query(`UPDATE audit_chain SET row_hash = $2 WHERE seq = $1`, [seq, hash]);
        const links = await manager.query(
          `SELECT seq, entry_kind, entry_id, row_hash, chain_hash FROM audit_chain ORDER BY seq`,
        );
        let previous = '0'.repeat(64);
        for (const l of links) {
          const next = linkHash(
            previous,
            String(l.seq),
            l.entry_kind,
            String(l.entry_id),
            l.row_hash,
          );
          if (next !== l.chain_hash)
            await manager.query(`UPDATE audit_chain SET chain_hash = $2 WHERE seq = $1`, [
              l.seq,
              next,
            ]);
          previous = next;
        }
      });
    await rewrite('ok:forged');
    report = await sealed();
    expect(report.firstBreak).toMatchObject({ problem: 'checkpoint-mismatch', seq: checkpointSeq });
    await rewrite(row.outcome);
    expect((await sealed()).firstBreak).toBeNull();
  });

  it('finds a row slipped in with an old date, and answers the verification to auditors and the CLI', async () => {
    const [before] = await sql<{ changed_at: Date; tenant_id: string }>(
      `SELECT changed_at, tenant_id FROM status_changes ORDER BY id DESC LIMIT 1`,
    );
    await tamper([
      [
        `INSERT INTO status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, changed_at)
         VALUES ('consent', gen_random_uuid(), $1, 'valid', 'revokedByPsu', 'forged', now() - interval '30 days')`,
        [before.tenant_id],
      ],
    ]);
    const report = await sealed();
    const [{ id }] = await sql<{ id: string }>(
      `SELECT id FROM status_changes WHERE cause = 'forged'`,
    );
    expect(report.firstBreak).toMatchObject({
      problem: 'late-seal',
      seq: await linkOf('status_change', String(id)),
    });

    const auditor = porticoClient(gateway, (await gateway.newTenantWithKey('auditor')).key);
    const answered = await auditor.GET('/v1/audit/verification');
    expect(answered.response.status).toBe(200);
    expect(answered.data?.ok).toBe(false);
    const app = porticoClient(gateway, (await gateway.newTenantWithKey('app')).key);
    expect((await app.GET('/v1/audit/verification')).response.status).toBe(403);

    const cli = await promisify(execFile)(
      process.execPath,
      ['dist/cli/main.js', 'audit:verify', '--json'],
      {
        env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'error', NODE_OPTIONS: '' },
      },
    ).catch((error: { code: number; stdout: string }) => error);
    expect((cli as { code?: number }).code).toBe(1);
    expect(JSON.parse((cli as { stdout: string }).stdout).ok).toBe(false);
  });
});

// A POS payment's row is written ahead with its call's deadline (200 s); answered in seconds, it is
// sealed with its outcome among rows written long before that deadline.
describe('the chain after POS payments', () => {
  let database: OwnDatabase;
  let gateway: TestGateway;
  beforeAll(async () => {
    database = await ownDatabase('chainpos');
    // Sealed by the tests themselves at the default deadlines (POS payments 200 s, reads 20 s).
    gateway = await startTestGateway({
      DATABASE_URL: database.url,
      AUDIT_SEAL_INTERVAL_MS: '0',
      AUDIT_SEAL_GRACE_MS: '0',
    });
  }, 120_000);
  afterAll(async () => {
    await gateway?.close({ unchecked: 'a forged row is left in its chain on purpose' });
    await database?.drop();
  });

  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) =>
    gateway.dataSource.query(text, params) as Promise<T[]>;
  const tamper = (statements: [string, unknown[]?][]) =>
    gateway.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL session_replication_role = replica`);
      for (const [text, params] of statements) await manager.query(text, params ?? []);
    });
  const sealed = async (options: { lateSealMs?: number } = {}) => {
    await gateway.app.get(AccessLogService).flushCompletions();
    await gateway.app.get(AuditChainService).seal();
    return gateway.app.get(AuditVerifierService).verify(options);
  };
  /** The link sealing the row of a POS payment's call, and the two links after it. */
  const afterPosRow = async (transactionId: string) => {
    const [link] = await sql<{ seq: string }>(
      `SELECT c.seq FROM audit_chain c
         JOIN access_log a ON c.entry_kind = 'access_log' AND a.id = c.entry_id
         JOIN provider_resources r ON r.id = a.card_resource_id
        WHERE r.token = $1 AND a.deadline_at IS NOT NULL`,
      [transactionId],
    );
    expect(link).toBeDefined();
    return sql<{ seq: string; entry_kind: string; entry_id: string }>(
      `SELECT seq, entry_kind, entry_id FROM audit_chain WHERE seq > $1 ORDER BY seq LIMIT 2`,
      [link.seq],
    );
  };
  let fast: string;

  it('verifies after a POS payment answered at once, one answered after a wait, a void and reads', async () => {
    const tenant = await posTenant(gateway);
    const [quick] = terminals(gateway, tenant);
    const [slow] = terminals(gateway, tenant, { outcome: { action: 'approve', afterMs: 1500 } });
    const pay = (terminal: string, query = '') => {
      const transactionId = randomUUID();
      return posCall(gateway, tenant, 'POST', `/v1/pos/transactions${query}`, {
        transactionId,
        amount: 1240,
        currency: 'EUR',
        type: 'payment',
        terminal,
      }).then((answer) => ({ answer, transactionId }));
    };
    const first = await pay(quick.token);
    expect(first.answer.statusCode).toBe(200);
    fast = first.transactionId;
    const held = await pay(slow.token, '?wait=0');
    expect(held.answer.statusCode).toBe(202);
    const voided = await posCall(gateway, tenant, 'POST', '/v1/pos/transactions', {
      transactionId: randomUUID(),
      currency: 'EUR',
      type: 'void',
      terminal: quick.token,
      originalTransactionId: fast,
    });
    expect(voided.statusCode).toBe(200);
    for (let status = ''; status !== 'CAPTURED'; await sleep(100)) {
      const read = await posCall(
        gateway,
        tenant,
        'GET',
        `/v1/pos/transactions/${held.transactionId}`,
      );
      status = (read.json() as { status: string }).status;
    }
    // Calls made after the payments, sealed after their rows.
    await pay(quick.token);

    const report = await sealed();
    expect(report.firstBreak).toBeNull();
    expect(await afterPosRow(fast)).toHaveLength(2);
    expect(await afterPosRow(held.transactionId)).toHaveLength(2);
    const [{ unsealed }] = await sql<{ unsealed: number }>(
      `SELECT count(*)::int AS unsealed FROM access_log a
        WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.entry_kind = 'access_log' AND c.entry_id = a.id)`,
    );
    expect(unsealed).toBe(0);
  });

  it('still finds an edited, a deleted and a reordered row right after a POS row, at its own link', async () => {
    const [next, then] = await afterPosRow(fast);
    const tables = {
      status_change: ['status_changes', 'changed_at'],
      access_log: ['access_log', 'created_at'],
    };
    const [table, at] = tables[next.entry_kind as keyof typeof tables];
    const [copy] = await sql<{ row: string }>(
      `SELECT to_jsonb(t)::text AS row FROM ${table} t WHERE id = $1`,
      [next.entry_id],
    );

    await tamper([
      [
        `UPDATE ${table} SET ${at} = ${at} - interval '1 millisecond' WHERE id = $1`,
        [next.entry_id],
      ],
    ]);
    expect((await sealed()).firstBreak).toMatchObject({ problem: 'row-edited', seq: next.seq });
    const restore = () =>
      tamper([
        [`DELETE FROM ${table} WHERE id = $1`, [next.entry_id]],
        [
          `INSERT INTO ${table} SELECT * FROM jsonb_populate_record(NULL::${table}, $1::jsonb)`,
          [copy.row],
        ],
      ]);
    await restore();
    expect((await sealed()).firstBreak).toBeNull();

    await tamper([[`DELETE FROM ${table} WHERE id = $1`, [next.entry_id]]]);
    expect((await sealed()).firstBreak).toMatchObject({ problem: 'row-deleted', seq: next.seq });
    await tamper([
      [
        `INSERT INTO ${table} SELECT * FROM jsonb_populate_record(NULL::${table}, $1::jsonb)`,
        [copy.row],
      ],
    ]);
    expect((await sealed()).firstBreak).toBeNull();

    // The row after the POS row and the one after it swap places in time: found at the first.
    const timeOf = (link: typeof next) => tables[link.entry_kind as keyof typeof tables];
    const [[nextAt], [thenAt]] = await Promise.all(
      [next, then].map((link) =>
        sql<{ at: string }>(
          `SELECT ${timeOf(link)[1]}::text AS at FROM ${timeOf(link)[0]} WHERE id = $1`,
          [link.entry_id],
        ),
      ),
    );
    expect(nextAt.at).not.toBe(thenAt.at);
    const place = (link: typeof next, time: string) =>
      [
        `UPDATE ${timeOf(link)[0]} SET ${timeOf(link)[1]} = $2::timestamptz WHERE id = $1`,
        [link.entry_id, time],
      ] as [string, unknown[]];
    await tamper([place(next, thenAt.at), place(then, nextAt.at)]);
    expect((await sealed()).firstBreak).toMatchObject({ problem: 'row-edited', seq: next.seq });
    await tamper([place(next, nextAt.at), place(then, thenAt.at)]);
    expect((await sealed()).firstBreak).toBeNull();
  });

  it('finds a row slipped in after the fact, dated right after a POS row, at its own link', async () => {
    const [pos] = await sql<{ id: string; tenant_id: string; created_at: string }>(
      `SELECT a.id, a.tenant_id, a.created_at::text FROM access_log a
         JOIN provider_resources r ON r.id = a.card_resource_id
        WHERE r.token = $1 AND a.deadline_at IS NOT NULL`,
      [fast],
    );
    // Sealed later than the verifier's tolerance after it, given here (the default is two passes and a
    // minute): the database's clock is past that before the row is slipped in.
    await eventually(
      async () =>
        (
          await sql<{ past: boolean }>(
            `SELECT now() > $1::timestamptz + interval '1.2 seconds' AS past`,
            [pos.created_at],
          )
        )[0].past,
      10_000,
      "the database's clock past the POS row's tolerance",
    );
    await tamper([
      [
        `INSERT INTO access_log (tenant_id, operation, psu_present, outcome, upstream_status, latency_ms, created_at, completed_at)
         VALUES ($1, 'getPosTransaction', false, 'ok', 200, 3, $2::timestamptz + interval '1 millisecond', $2::timestamptz + interval '2 milliseconds')`,
        [pos.tenant_id, pos.created_at],
      ],
    ]);
    const report = await sealed({ lateSealMs: 1000 });
    const [{ id }] = await sql<{ id: string }>(`SELECT max(id) AS id FROM access_log`);
    const [forged] = await sql<{ seq: string }>(
      `SELECT seq FROM audit_chain WHERE entry_kind = 'access_log' AND entry_id = $1`,
      [id],
    );
    expect(report.firstBreak).toMatchObject({ problem: 'late-seal', seq: String(forged.seq) });
  });
});

describe('the export of a large trail', () => {
  let database: OwnDatabase;
  let gateway: TestGateway;
  beforeAll(async () => {
    database = await ownDatabase('chain');
    gateway = await startTestGateway(
      { DATABASE_URL: database.url, AUDIT_SEAL_INTERVAL_MS: '0', AUDIT_SEAL_GRACE_MS: '0' },
      [],
      { listen: true },
    );
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
  });

  // 100,000 rows on PostgreSQL; the embedded engine, five times slower at sealing, does 20,000.
  const rows = process.env.DATABASE_URL ? 100_000 : 20_000;

  it('streams a large sealed trail with the verification, in time order, from a cursor', async () => {
    const { tenantId } = await gateway.newTenantWithKey('app');
    await gateway.dataSource.query(
      `INSERT INTO access_log (tenant_id, consent_id, operation, psu_present, outcome, upstream_status, latency_ms, completed_at, created_at)
       SELECT $1, gen_random_uuid(), 'getAccountBalances', n % 2 = 0, 'ok', 200, n % 50, now(), now() - interval '1 hour' + n * interval '1 millisecond'
       FROM generate_series(1, $2::int) AS n`,
      [tenantId, rows],
    );
    const sealed = await gateway.app.get(AuditChainService).seal();
    expect(sealed).toBe(rows);
    const { key } = await gateway.newTenantWithKey('auditor');

    const heapBefore = process.memoryUsage().heapUsed;
    let peak = heapBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
    const answer = await fetch(
      `${gateway.baseUrl}/v1/audit/export?format=csv&tenantId=${tenantId}`,
      {
        headers: { authorization: `Bearer ${key}` },
      },
    );
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/text\/csv/);
    let lines = 0;
    let head = '';
    let last = '';
    let bytes = 0;
    const decoder = new TextDecoder();
    for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      const text = decoder.decode(chunk, { stream: true });
      if (head.length < 2000) head += text;
      lines += text.split('\n').length - 1;
      last = text;
    }
    clearInterval(sampler);
    expect(head).toMatch(/^# verification: ok at .*; links \d+/);
    expect(head.split('\n')[2]).toMatch(/^kind,id,tenantId,at,/);
    // Two comment lines, the header row, a row per record.
    expect(lines).toBe(3 + rows);
    expect(last.trim().split('\n').pop()).toMatch(
      /^access_log,\d+,[0-9a-f-]{36},.*,\d+,[0-9a-f]{64}$/,
    );
    process.stdout.write(
      `export of ${rows} rows: ${(bytes / 1e6).toFixed(1)} MB streamed, heap grew at most ${((peak - heapBefore) / 1e6).toFixed(1)} MB\n`,
    );
  }, 300_000);
});
