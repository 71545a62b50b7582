import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { freePort, portIsFree } from '../support/processes.js';

/**
 * The ports tests hand to servers that must know their address before they listen. They come from below
 * the kernel's ephemeral range: an outgoing connection of another jest worker (or its `listen(0)`) can
 * take any port inside it between the answer and the listen, which once failed CI with EADDRINUSE.
 */
describe('freePort', () => {
  const ephemeralLow = Number(
    readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
  );

  it('answers distinct free ports outside the ephemeral range, skipping one that is taken', async () => {
    const first = await freePort();
    expect(first).toBeLessThan(ephemeralLow);
    expect(first).toBeGreaterThan(1024);
    expect(await portIsFree(first)).toBe(true);

    // Hold the port that would come next; freePort passes over it.
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(first + 1, '127.0.0.1', resolve));
    try {
      const second = await freePort();
      expect(second).not.toBe(first);
      expect(second).not.toBe(first + 1);
      expect(second).toBeLessThan(ephemeralLow);
    } finally {
      await new Promise((resolve) => held.close(resolve));
    }
  });
});
