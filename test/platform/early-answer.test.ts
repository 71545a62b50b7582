import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rawConversation, rawRequest } from '../support/raw-http.js';
import { startTestGateway, type TestGateway } from '../support/test-gateway.js';

/**
 * A request refused before its body was read (415 on a route that takes no body, 404, 401) must get exactly
 * one answer, even when the unread body turns out to be malformed: Node's HTTP parser still reads it after
 * the answer, and its error must not become a second, unrequested answer on the same connection.
 */
describe('one answer per refused request, whatever its unread body holds', () => {
  let sut: TestGateway;
  let port: number;
  beforeAll(async () => {
    sut = await startTestGateway({}, [], { listen: true });
    port = Number(new URL(sut.baseUrl).port);
  });
  afterAll(() => sut.close());

  const head = (method: string, url: string, extra = '') =>
    `${method} ${url} HTTP/1.1\r\nHost: x\r\n${extra}Transfer-Encoding: chunked\r\n\r\n`;
  const BAD_CHUNKS = ['zz\r\n{}\r\n0\r\n\r\n', '-1\r\n\r\n', '5\r\nabc\r\n0\r\n\r\n'];
  const refusedEarly = [
    // A route that takes no body, sent one without a Content-Type: 415 before the body is read.
    ['DELETE', '/v1/consents/00000000-0000-4000-8000-000000000000', 415],
    // No such route: 404 before the body is read.
    ['POST', '/v1/nowhere', 404],
  ] as const;

  it('answers once and closes the connection when the bad chunk comes after the answer', async () => {
    for (const [method, url, status] of refusedEarly)
      for (const chunk of BAD_CHUNKS) {
        const transcript = await rawConversation(port, [head(method, url), chunk]);
        expect({ method, url, chunk, statuses: transcript.statuses }).toEqual({
          method,
          url,
          chunk,
          statuses: [status],
        });
        expect(transcript.text).toMatch(/\r\nconnection: close\r\n/i);
        expect(transcript.closed).toBe(true);
      }
  });

  it('answers once when the bad chunk arrives with the head (20 rounds: the parser and the answer race)', async () => {
    for (let round = 0; round < 20; round++)
      for (const [method, url] of refusedEarly)
        for (const chunk of BAD_CHUNKS) {
          const transcript = await rawConversation(port, [head(method, url) + chunk]);
          expect(transcript.statuses).toHaveLength(1);
          expect(transcript.closed).toBe(true);
        }
  });

  it('keeps a connection whose request was answered and read in full usable for the next request', async () => {
    const transcript = await rawConversation(port, [
      `GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n`,
    ]);
    expect(transcript.statuses).toEqual([200, 200]);
    expect(transcript.closed).toBe(false);
    // And the server still answers new connections.
    expect((await rawRequest(port, `GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n`)).status).toBe(
      200,
    );
  });
});
