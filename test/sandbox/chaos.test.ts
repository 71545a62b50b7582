import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ChaosRuleError, type ChaosRuleInput } from '#src/sandbox/chaos/chaos.js';
import { startSandbox, type RunningSandbox } from '#src/sandbox/sandbox.js';
import { UpstreamError } from '#src/upstreams/http/upstream-errors.js';
import type { UpstreamTransport } from '#src/upstreams/http/upstream-transport.js';
import { operationPath, sendOperation, until } from '../support/chaos.js';
import { callOperation } from '../support/sandbox-api.js';
import { devTlsFiles, transportTo } from '../support/upstream.js';

const BRAND = 'danube-bank';
const ALICE_HUF = 'HU75118000170000001234567817';
const REDIRECTS = {
  'tpp-redirect-uri': 'https://tpp.example/ok',
  'tpp-nok-redirect-uri': 'https://tpp.example/nok',
};
const CONSENT = {
  access: { accounts: [{ iban: ALICE_HUF }] },
  recurringIndicator: false,
  validUntil: new Date(Date.now() + 86_400_000).toISOString().slice(0, 10),
};
const PAYMENT = {
  instructedAmount: { currency: 'HUF', amount: '1500.00' },
  creditorName: 'Kovacs Peter',
  creditorAccount: { iban: 'HU42117730161111101800000000' },
  creditorType: 'INDIVIDUAL',
  remittanceInformationUnstructured: 'Chaos',
};
const DOMESTIC = 'domestic-credit-transfers';
const createConsent = (transport: UpstreamTransport) =>
  sendOperation<{ consentId: string }>(transport, 'createConsent', {
    params: { brandId: BRAND },
    headers: REDIRECTS,
    body: CONSENT,
  });
const consentStatus = async (transport: UpstreamTransport, consentId: string) =>
  (await callOperation(transport, 'getConsentStatus', { params: { brandId: BRAND, consentId } }))
    .body;
const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(UpstreamError);
      return error as UpstreamError;
    },
  );
const tppMessage = (body: unknown) =>
  (body as { tppMessages: { category: string; code: string }[] }).tppMessages[0];

describe('sandbox chaos: faults the real sandbox injects, seen over mutual TLS', () => {
  let sandbox: RunningSandbox;
  let tpp: UpstreamTransport;
  const others: UpstreamTransport[] = [];
  /** A client whose header and body timeouts are `ms`. */
  const impatient = (ms: number) => {
    const transport = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'), {
      headersTimeoutMs: ms,
      bodyTimeoutMs: ms,
    });
    others.push(transport);
    return transport;
  };
  const calls = (operationId: string) => sandbox.bank.control.calls()[operationId] ?? 0;
  const add = (rule: ChaosRuleInput) => sandbox.chaos.add(rule);

  beforeAll(async () => {
    sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
    tpp = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'));
  });
  afterEach(() => sandbox.chaos.clear());
  afterAll(async () => {
    await Promise.all([tpp, ...others].map((transport) => transport.close()));
    await sandbox.close();
  });

  it('status answers the injected status and headers with a tppMessages body, without performing the operation', async () => {
    add({
      operation: 'createConsent',
      fault: 'status',
      status: 503,
      headers: { 'retry-after': '30' },
      times: 1,
    });
    const before = calls('createConsent');
    const refused = await createConsent(tpp);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('30');
    expect(tppMessage(refused.body)).toMatchObject({
      category: 'ERROR',
      code: 'SERVICE_UNAVAILABLE',
    });
    expect(calls('createConsent')).toBe(before);

    const created = await createConsent(tpp);
    expect(created.status).toBe(201);
    expect(calls('createConsent')).toBe(before + 1);
  });

  it('status answers without a body with emptyBody, and with the given body as is', async () => {
    add({ operation: 'listBrands', fault: 'status', emptyBody: true, times: 1 });
    add({ operation: 'listBrands', fault: 'status', status: 502, body: { oops: true }, times: 1 });
    const empty = await sendOperation(tpp, 'listBrands');
    expect([empty.status, empty.headers['content-length'], empty.body]).toEqual([
      500,
      '0',
      undefined,
    ]);
    const given = await sendOperation(tpp, 'listBrands');
    expect([given.status, given.body]).toEqual([502, { oops: true }]);
    expect((await callOperation(tpp, 'listBrands')).status).toBe(200);
  });

  it('delay performs the operation at once and answers it later: a client with a shorter timeout gives up', async () => {
    add({ operation: 'createConsent', fault: 'delay', delayMs: 2000, times: 2 });
    const before = calls('createConsent');
    const timedOut = await failureOf(createConsent(impatient(200)));
    expect(timedOut.kind).toBe('timeout');
    expect(calls('createConsent')).toBe(before + 1);

    let answered = false;
    const late = createConsent(tpp).finally(() => (answered = true));
    await until(() => calls('createConsent') === before + 2);
    expect(answered).toBe(false);
    const created = await late;
    expect(created.status).toBe(201);
    expect(await consentStatus(tpp, created.body?.consentId as string)).toEqual({
      consentStatus: 'received',
    });
  });

  it('reset drops the connection without an answer and without performing the operation', async () => {
    add({ operation: 'createConsent', fault: 'reset', times: 1 });
    const before = calls('createConsent');
    const failure = await failureOf(createConsent(tpp));
    expect(failure.kind).toBe('connection');
    expect(failure.message).toMatch(/ECONNRESET|closed/);
    expect(calls('createConsent')).toBe(before);
    expect((await createConsent(tpp)).status).toBe(201);
  });

  it('hang never answers and keeps the socket open until the client gives up', async () => {
    add({ operation: 'listBrands', fault: 'hang', times: 1 });
    const before = calls('listBrands');
    const failure = await failureOf(sendOperation(impatient(300), 'listBrands'));
    expect(failure.kind).toBe('timeout');
    expect(failure.message).toMatch(/UND_ERR_HEADERS_TIMEOUT/);
    expect(calls('listBrands')).toBe(before);
    expect(sandbox.chaos.list()[0]).toMatchObject({ fired: 1, remaining: 0 });
  });

  it('stall-body performs the operation, sends its headers and half its body, then nothing', async () => {
    add({ operation: 'createConsent', fault: 'stall-body', times: 2 });
    const client = impatient(300);
    const response = await client.dispatcher().request({
      origin: new URL(sandbox.openBankingUrl).origin,
      path: operationPath('createConsent', { brandId: BRAND }),
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': randomUUID(), ...REDIRECTS },
      body: JSON.stringify(CONSENT),
    });
    expect(response.statusCode).toBe(201);
    const length = Number(response.headers['content-length']);
    const received: Buffer[] = [];
    const stalled = await (async () => {
      try {
        for await (const chunk of response.body) received.push(chunk as Buffer);
      } catch (error) {
        return error as { code?: string };
      }
    })();
    expect(stalled?.code).toBe('UND_ERR_BODY_TIMEOUT');
    const part = Buffer.concat(received).toString();
    expect(part.length).toBe(Math.floor(length / 2));

    const [withheld] = sandbox.chaos.list()[0].withheld;
    const whole = JSON.stringify(withheld.body);
    expect([whole.length, whole.startsWith(part)]).toEqual([length, true]);
    expect(await consentStatus(tpp, (withheld.body as { consentId: string }).consentId)).toEqual({
      consentStatus: 'received',
    });

    expect((await failureOf(createConsent(client))).kind).toBe('timeout');
  });

  it('bad-json answers 200 application/json with a body that is not JSON', async () => {
    const { consentId } = (await createConsent(tpp)).body as { consentId: string };
    add({ operation: 'getConsentStatus', fault: 'bad-json', times: 2 });
    const response = await tpp.dispatcher().request({
      origin: new URL(sandbox.openBankingUrl).origin,
      path: operationPath('getConsentStatus', { brandId: BRAND, consentId }),
      method: 'GET',
      headers: { 'x-request-id': randomUUID() },
    });
    const text = await response.body.text();
    expect([response.statusCode, response.headers['content-type']]).toEqual([
      200,
      'application/json',
    ]);
    expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);

    const failure = await failureOf(
      sendOperation(tpp, 'getConsentStatus', { params: { brandId: BRAND, consentId } }),
    );
    expect(failure.kind).toBe('bad-response');
  });

  it('act-then-fail creates the consent at the bank, then answers 500: a later GET finds it', async () => {
    add({ operation: 'createConsent', fault: 'act-then-fail', times: 1 });
    const before = calls('createConsent');
    const failed = await createConsent(tpp);
    expect(failed.status).toBe(500);
    expect(failed.headers.location).toBeUndefined();
    expect(tppMessage(failed.body).code).toBe('INTERNAL_SERVER_ERROR');
    expect(calls('createConsent')).toBe(before + 1);

    const [withheld] = sandbox.chaos.list()[0].withheld;
    expect(withheld.status).toBe(201);
    const { consentId } = withheld.body as { consentId: string };
    expect(await consentStatus(tpp, consentId)).toEqual({ consentStatus: 'received' });
  });

  it('act-then-fail with then reset deletes the consent, then drops the connection', async () => {
    const { consentId } = (await createConsent(tpp)).body as { consentId: string };
    add({ operation: 'deleteConsent', fault: 'act-then-fail', then: 'reset', times: 1 });
    const failure = await failureOf(
      sendOperation(tpp, 'deleteConsent', { params: { brandId: BRAND, consentId } }),
    );
    expect(failure.kind).toBe('connection');
    expect(await consentStatus(tpp, consentId)).toEqual({ consentStatus: 'terminatedByTpp' });
  });

  it('act-then-fail with then hang initiates the payment, then never answers', async () => {
    add({ operation: 'initiatePayment', fault: 'act-then-fail', then: 'hang', times: 1 });
    const failure = await failureOf(
      sendOperation(impatient(300), 'initiatePayment', {
        params: { brandId: BRAND, paymentProduct: DOMESTIC },
        headers: REDIRECTS,
        body: PAYMENT,
      }),
    );
    expect(failure.kind).toBe('timeout');
    const [withheld] = sandbox.chaos.list()[0].withheld;
    const { paymentId } = withheld.body as { paymentId: string };
    const status = await callOperation(tpp, 'getPaymentStatus', {
      params: { brandId: BRAND, paymentProduct: DOMESTIC, paymentId },
    });
    expect(status.body).toEqual({ transactionStatus: 'RCVD' });
  });

  it('times: the next N calls fault, later ones are answered; * matches every operation', async () => {
    add({ operation: '*', fault: 'status', status: 502, times: 2 });
    expect((await sendOperation(tpp, 'listBrands')).status).toBe(502);
    const other = await sendOperation(tpp, 'getConsentStatus', {
      params: { brandId: BRAND, consentId: 'no-such-consent' },
    });
    expect(other.status).toBe(502);
    expect((await sendOperation(tpp, 'listBrands')).status).toBe(200);
    expect(sandbox.chaos.list()).toEqual([
      expect.objectContaining({ operation: '*', remaining: 0, fired: 2, matched: 2 }),
    ]);
  });

  it('a rule for another operation leaves a call alone', async () => {
    add({ operation: 'getBalances', fault: 'status', status: 503 });
    expect((await sendOperation(tpp, 'listBrands')).status).toBe(200);
    expect(sandbox.chaos.list()[0]).toMatchObject({ matched: 0, fired: 0, remaining: null });
  });

  it('probability with a seed faults the same calls on every run', async () => {
    const run = async () => {
      add({ operation: 'listBrands', fault: 'status', status: 503, probability: 0.5, seed: 'h5' });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) statuses.push((await sendOperation(tpp, 'listBrands')).status);
      const [rule] = sandbox.chaos.list();
      sandbox.chaos.clear();
      return { statuses, rule };
    };
    const first = await run();
    const second = await run();
    expect(second.statuses).toEqual(first.statuses);
    expect(new Set(first.statuses)).toEqual(new Set([200, 503]));
    expect(first.rule).toMatchObject({
      matched: 20,
      fired: first.statuses.filter((status) => status === 503).length,
    });

    add({ operation: 'listBrands', fault: 'status', probability: 0 });
    for (let i = 0; i < 5; i++) expect((await sendOperation(tpp, 'listBrands')).status).toBe(200);
    expect(sandbox.chaos.list()[0]).toMatchObject({ matched: 5, fired: 0 });
  });

  it('refuses a bad rule given in code with every problem named', () => {
    const problemsOf = (rule: unknown) => {
      try {
        add(rule as ChaosRuleInput);
      } catch (error) {
        expect(error).toBeInstanceOf(ChaosRuleError);
        return (error as ChaosRuleError).problems;
      }
      throw new Error('expected the rule to be refused');
    };
    const operationProblem = expect.stringMatching(
      /^operation must be '\*' or one of .*'getBalances'/,
    );
    expect(problemsOf({ operation: 'getBalance', fault: 'explode' })).toEqual([
      expect.stringMatching(/^fault must be one of 'delay', 'status'/),
      operationProblem,
    ]);
    expect(problemsOf({ operation: 'getBalance', fault: 'hang', times: 0, delayMs: 3 })).toEqual([
      operationProblem,
      'times must be a whole number of at least 1',
      "delayMs does not apply to fault 'hang'",
    ]);
    expect(sandbox.chaos.list()).toEqual([]);
  });

  describe('the control routes on the SCA listener', () => {
    const control = (method: string, path = '', body?: unknown, contentType = 'application/json') =>
      fetch(`${sandbox.scaUrl}/sandbox/chaos${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': contentType },
        body:
          body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });

    it('adds a rule that faults the mTLS API, lists it with its counts, deletes it', async () => {
      const added = await control('POST', '', {
        operation: 'listBrands',
        fault: 'status',
        status: 503,
        times: 1,
      });
      expect(added.status).toBe(201);
      const rule = (await added.json()) as { id: number };
      expect(rule).toMatchObject({ operation: 'listBrands', remaining: 1, fired: 0 });

      expect((await sendOperation(tpp, 'listBrands')).status).toBe(503);
      const listed = await control('GET');
      expect(await listed.json()).toEqual({
        rules: [
          {
            id: rule.id,
            operation: 'listBrands',
            fault: 'status',
            status: 503,
            times: 1,
            remaining: 0,
            fired: 1,
            matched: 1,
            withheld: [],
          },
        ],
      });

      expect((await control('DELETE', `/${rule.id}`)).status).toBe(204);
      expect((await control('DELETE', `/${rule.id}`)).status).toBe(404);
      expect(await (await control('GET')).json()).toEqual({ rules: [] });
    });

    it('clears every rule', async () => {
      await control('POST', '', { operation: 'listBrands', fault: 'hang' });
      await control('POST', '', { operation: '*', fault: 'reset', probability: 0.1 });
      expect(((await (await control('GET')).json()) as { rules: unknown[] }).rules).toHaveLength(2);
      expect((await control('DELETE')).status).toBe(204);
      expect(await (await control('GET')).json()).toEqual({ rules: [] });
      expect((await sendOperation(tpp, 'listBrands')).status).toBe(200);
    });

    it.each([
      [
        { operation: 'getBalances', fault: 'delay' },
        'delayMs must be a whole number of milliseconds from 0 to 600000',
      ],
      [
        { operation: 'getBalances', fault: 'hang', delayMs: 5 },
        "delayMs does not apply to fault 'hang'",
      ],
      [{ operation: 'getBalances', fault: 'hang', colour: 'red' }, 'unknown field colour'],
      [
        { operation: 'getBalances', fault: 'status', probability: 2 },
        'probability must be a number from 0 to 1',
      ],
      [
        { operation: 'getBalances', fault: 'status', times: 0 },
        'times must be a whole number of at least 1',
      ],
      [
        { operation: 'getBalances', fault: 'status', status: 700 },
        'status must be an HTTP status from 200 to 599',
      ],
      [
        { operation: 'getBalances', fault: 'status', emptyBody: true, body: { a: 1 } },
        'body and emptyBody exclude each other',
      ],
      [
        { operation: 'getBalances', fault: 'act-then-fail', then: 'reset', status: 503 },
        "status does not apply to then 'reset'",
      ],
      [
        { operation: 'getBalances', fault: 'bad-json', body: '{"a":1}' },
        'body must be a string that is not JSON for bad-json',
      ],
      [{ operation: 'getBalances', fault: 'hang', seed: 1 }, 'seed needs a probability'],
      [['getBalances'], 'the rule must be a JSON object'],
    ])('answers 400 naming the problem for %j', async (rule, problem) => {
      const refused = await control('POST', '', rule);
      expect(refused.status).toBe(400);
      const body = (await refused.json()) as { error: string; problems: string[] };
      expect(body.problems).toContain(problem);
      expect(body.error).toContain(problem);
      expect(sandbox.chaos.list()).toEqual([]);
    });

    it('answers 400 to a body that is not JSON', async () => {
      const refused = await control('POST', '', '{"operation":', 'application/json');
      expect(refused.status).toBe(400);
      expect(sandbox.chaos.list()).toEqual([]);
    });
  });
});

describe('sandbox chaos and close()', () => {
  it('close() finishes while sockets hang, stall or wait for a delayed answer, and drops them', async () => {
    const sandbox = await startSandbox({
      certsDir: 'certs/dev',
      host: '127.0.0.1',
      openBankingPort: 0,
      scaPort: 0,
    });
    const patient = transportTo(sandbox.openBankingUrl, devTlsFiles('certs/dev', 'tpp'), {
      headersTimeoutMs: 600_000,
      bodyTimeoutMs: 600_000,
      poolConnections: 8,
    });
    let closed = false;
    try {
      sandbox.chaos.add({ operation: 'listBrands', fault: 'hang' });
      sandbox.chaos.add({ operation: 'createConsent', fault: 'stall-body' });
      sandbox.chaos.add({ operation: 'initiatePayment', fault: 'act-then-fail', then: 'hang' });
      sandbox.chaos.add({ operation: 'getConsentStatus', fault: 'delay', delayMs: 600_000 });
      const pending = [
        sendOperation(patient, 'listBrands'),
        createConsent(patient),
        sendOperation(patient, 'initiatePayment', {
          params: { brandId: BRAND, paymentProduct: DOMESTIC },
          headers: REDIRECTS,
          body: PAYMENT,
        }),
        sendOperation(patient, 'getConsentStatus', {
          params: { brandId: BRAND, consentId: 'no-such-consent' },
        }),
      ].map((call) => failureOf(call));
      await until(() =>
        sandbox.chaos
          .list()
          .every(
            (rule) =>
              rule.fired === 1 &&
              (rule.withheld.length === 1 || rule.fault === 'hang' || rule.fault === 'delay'),
          ),
      );
      await until(() => sandbox.bank.control.calls().getConsentStatus === 1);

      await sandbox.close();
      closed = true;
      const failures = await Promise.all(pending);
      expect(failures.map((failure) => failure.kind)).toEqual([
        'connection',
        'connection',
        'connection',
        'connection',
      ]);
    } finally {
      await patient.close();
      if (!closed) await sandbox.close();
    }
  });
});
