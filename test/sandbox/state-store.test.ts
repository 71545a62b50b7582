import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { SandboxStateStore } from '#src/sandbox/persistence/sandbox-state-store.js';
import { testDatabaseUrl } from '../support/test-gateway.js';

type Kind = 'thing';

describe("the sandbox's state store", () => {
  const schema = `sandbox_store_${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => db.end());
  });

  // On the embedded engine every connection shares one session: a statement name prepared by one
  // connection would clash with the next store's (a restart, a reconnect).
  it('writes every kind of change again from a new store on the same table (a restart)', async () => {
    for (const round of [1, 2]) {
      const store = await SandboxStateStore.open<Kind>(testDatabaseUrl(), schema, 'things');
      try {
        await store.write({
          upserts: [{ kind: 'thing', id: `a${round}`, data: { round } }],
          deletes: [],
        });
        await store.write({
          upserts: [{ kind: 'thing', id: `b${round}`, data: { round } }],
          deletes: [{ kind: 'thing', id: `a${round}` }],
        });
        if (round === 2) await store.write({ reset: true, upserts: [], deletes: [] });
        const rows = await store.load();
        expect(rows.map((row) => row.id).sort()).toEqual(round === 1 ? ['b1'] : []);
      } finally {
        await store.close();
      }
    }
  });
});
