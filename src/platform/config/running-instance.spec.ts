import { describe, expect, it } from '@jest/globals';
import { loadConfig } from './app-config.js';
import { withSandboxUpstreams } from './running-instance.js';

const upstreamsOf = (env: Record<string, string>) => {
  const { openBanking, card, pos } = withSandboxUpstreams(loadConfig(env)).upstreams;
  return { openBanking: openBanking.baseUrl, card: card.baseUrl, pos: pos.baseUrl };
};

describe('the upstreams of the sandbox a gateway of the same configuration runs', () => {
  it("are the sandbox's listeners on its configured ports", () => {
    expect(upstreamsOf({ SANDBOX_OB_PORT: '3701', SANDBOX_CARD_PORT: '3703' })).toEqual({
      openBanking: 'https://localhost:3701',
      card: 'https://localhost:3703',
      pos: 'https://localhost:8445',
    });
  });

  it('keep an address the configuration gives, and find none on a port of 0 (any free port)', () => {
    expect(
      upstreamsOf({
        SANDBOX_OB_PORT: '0',
        UPSTREAM_CARD_BASE_URL: 'https://card.example',
        SANDBOX_POS_PORT: '0',
      }),
    ).toEqual({ openBanking: undefined, card: 'https://card.example', pos: undefined });
  });

  it('are none when the gateway runs no sandbox (its bank elsewhere)', () => {
    expect(upstreamsOf({ UPSTREAM_OB_BASE_URL: 'https://bank.example' })).toEqual({
      openBanking: 'https://bank.example',
      card: undefined,
      pos: undefined,
    });
  });
});
