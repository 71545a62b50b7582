import { describe, expect, it } from '@jest/globals';
import { ProblemException } from '#src/platform/errors/problem.js';
import { WalletTokenizationBodyPipe, walletPayerRefusal } from './wallet-body.pipe.js';

const refused = (code: string, text: string) =>
  new ProblemException({
    status: 400,
    type: 'urn:portico:problem:upstream-refused',
    title: 'Refused by the provider',
    extensions: { upstream: { status: 400, code, text } },
  });

/** A wallet token whose message Portico cannot read (a wallet provider's, encrypted). */
const encrypted = Buffer.from(
  JSON.stringify({ protocolVersion: 'ECv2', signedMessage: '{"encryptedMessage":"…"}' }),
).toString('base64');

describe("a PAN-only wallet token's payer email or phone", () => {
  it("answers the provider's 80002 payer_email as the facade's own check does, keeping the provider's answer", () => {
    const problem = walletPayerRefusal(refused('80002', 'invalid value: payer_email'));
    expect(problem?.init).toMatchObject({
      status: 400,
      type: 'urn:portico:problem:validation-failed',
      errors: [
        { field: 'payerEmail', reason: expect.stringContaining('PAN-only') },
        { field: 'payerPhone', reason: expect.stringContaining('PAN-only') },
      ],
      extensions: { upstream: { code: '80002', text: 'invalid value: payer_email' } },
    });
  });

  it('leaves every other refusal as it is', () => {
    expect(walletPayerRefusal(refused('80002', 'invalid value: md'))).toBeUndefined();
    expect(walletPayerRefusal(refused('20026', 'expired'))).toBeUndefined();
    expect(walletPayerRefusal(new Error('socket hang up'))).toBeUndefined();
  });

  it('lets a token whose method cannot be read go to the provider, which alone can judge it', () => {
    const body = {
      amount: 1250,
      type: 'webwallet',
      token: encrypted,
      returnUrl: 'https://a.example/',
    };
    expect(new WalletTokenizationBodyPipe().transform(body).form.token).toBe(encrypted);
  });
});
