import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { failureInWords } from '#src/cli/commands.js';
import { ownDatabase } from '../support/own-database.js';
import { runProcess } from '../support/processes.js';
import {
  bearer,
  startTestGateway,
  testDatabaseUrl,
  uniqueSlug,
  type TestGateway,
} from '../support/test-gateway.js';

const CLI = 'dist/cli/main.js';
const cli = (...args: string[]) => runProcess(CLI, args, { DATABASE_URL: testDatabaseUrl() });

describe('npm run cli', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway.close());

  it('creates a tenant, issues a key that the gateway accepts, lists it without the secret, and revokes it', async () => {
    const slug = uniqueSlug('cli');
    const created = await cli('tenant:create', slug, '--name', 'CLI tenant');
    expect(created).toMatchObject({ code: 0 });
    expect(created.stdout).toContain(`created tenant ${slug}`);

    const issued = await cli('key:issue', slug, '--role', 'auditor', '--label', 'compliance');
    expect(issued.code).toBe(0);
    const key = /API key \(shown once, store it now\): (ptk_\S+)/.exec(
      issued.stdout,
    )?.[1] as string;
    const keyId = /issued auditor key (\S+)/.exec(issued.stdout)?.[1] as string;
    const me = await gateway.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    expect(me.json()).toMatchObject({ tenantSlug: slug, role: 'auditor' });

    const listed = await cli('key:list', slug);
    expect(listed.stdout).toContain(keyId);
    expect(listed.stdout).toContain('compliance');
    expect(listed.stdout).not.toContain(key);

    expect((await cli('tenant:list')).stdout).toContain(slug);
    expect((await cli('key:revoke', keyId)).stdout).toContain(`revoked key ${keyId}`);
    // The CLI is another process: the gateway hears of the revocation by NOTIFY (PostgreSQL) or by its
    // once-a-second poll (the embedded engine delivers no notices), within its cache's TTL at the most.
    const status = async () =>
      (await gateway.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) })).statusCode;
    let last = await status();
    for (let i = 0; i < 100 && last !== 401; i++) {
      await new Promise((done) => setTimeout(done, 50));
      last = await status();
    }
    expect(last).toBe(401);
  });

  it("issues the installation's operator key, which manages every tenant", async () => {
    const slug = uniqueSlug('cli-ops');
    expect((await cli('tenant:create', slug, '--name', 'Operations')).code).toBe(0);
    const issued = await cli('key:issue', slug, '--role', 'operator', '--label', 'ops team');
    expect(issued.stdout).toMatch(/issued operator key \S+ for tenant/);
    const key = /API key \(shown once, store it now\): (ptk_\S+)/.exec(
      issued.stdout,
    )?.[1] as string;
    const other = await gateway.newTenantWithKey('app');
    const tenants = await gateway.app.inject({
      method: 'GET',
      url: '/v1/tenants',
      headers: bearer(key),
    });
    expect(tenants.json().items.map((t: { id: string }) => t.id)).toContain(other.tenantId);
  });

  it('explains a wrong role and an unknown command, and exits non-zero', async () => {
    const badRole = await cli('key:issue', 'demo', '--role', 'superuser');
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain('--role must be one of app, auditor, admin, operator');
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('usage: npm run cli -- <command>');
  });

  it('refuses an unknown option, an option without its value and a stray argument, naming the command, with exit code 2', async () => {
    const unknown = await cli('key:issue', 'demo', '--role', 'app', '--frob');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      'portico: key:issue: unknown option --frob (it takes --role, --label)',
    );
    expect(unknown.stderr).toContain('usage: npm run cli -- key:issue <tenant slug or id> --role');
    const none = await cli('tenant:list', '--verbose');
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('tenant:list: unknown option --verbose (it takes no options)');

    const noValue = await cli('tenant:create', 'acme', '--name');
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toContain('tenant:create: option --name needs a value');

    const stray = await cli('tenant:create', 'acme', 'Acme', 'Budget');
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('tenant:create: unexpected argument "Acme"');
  });

  it("takes --option=value as well as --option value, and shows one command's usage for --help", async () => {
    const slug = uniqueSlug('cli-inline');
    const created = await cli('tenant:create', slug, '--name=Inline name');
    expect(created).toMatchObject({ code: 0 });
    expect((await cli('tenant:list')).stdout).toMatch(new RegExp(`${slug}\\s+Inline name`));

    const help = await cli('key:revoke', '--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toBe(
      'usage: npm run cli -- key:revoke <key id>\n      Revoke an API key; it stops working on the next request, on every replica\n',
    );
  });

  it('refuses an invalid tenant slug with the reason', async () => {
    const result = await cli('tenant:create', 'Bad Slug');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/slug must match/);
  });

  it('prints exactly one JSON document for audit:verify --json, and nothing else on standard output', async () => {
    // A database of its own: the shared one holds other files' rows, which no sealer runs for.
    const own = await ownDatabase('cli_verify');
    const result = await runProcess(CLI, ['audit:verify', '--json'], {
      DATABASE_URL: own.url,
    }).finally(() => own.drop());
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, firstBreak: null });
    // No TypeORM extension warning (pgcrypto) or other log line, on either stream.
    expect(result.stderr).toBe('');
  });

  it('refuses a key id that is not one before asking the database: no SQL text, no driver error', async () => {
    const result = await cli('key:revoke', 'not-a-uuid');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      'portico: <key id> must be an id as the list shows it (a UUID), not "not-a-uuid"',
    );
    expect(result.stderr).not.toMatch(/SELECT|invalid input syntax|api_keys/);
  });

  it('says a tenant exists already, in words, without the failed statement', async () => {
    const slug = uniqueSlug('cli-twice');
    expect((await cli('tenant:create', slug)).code).toBe(0);
    const again = await cli('tenant:create', slug);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(`portico: A tenant with slug "${slug}" already exists\n`);
  });
});

describe('failureInWords', () => {
  it("names a database refusal by its SQLSTATE, never the driver's message", () => {
    const driverError = Object.assign(new Error('invalid input syntax for type uuid: "x"'), {
      code: '22P02',
    });
    const queryFailed = Object.assign(new Error('SELECT "ApiKey"."id" FROM api_keys'), {
      driverError,
    });
    expect(failureInWords(queryFailed)).toBe(
      'the database refused the command (SQLSTATE 22P02); nothing was changed',
    );
    expect(failureInWords(driverError)).not.toContain('invalid input syntax');
  });

  it('says the database cannot be reached, and passes other failures on as they are', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    expect(failureInWords(refused)).toMatch(/^cannot reach the database \(ECONNREFUSED\)/);
    expect(failureInWords(new Error('tenant acme has no card merchant keys'))).toBe(
      'tenant acme has no card merchant keys',
    );
  });
});
