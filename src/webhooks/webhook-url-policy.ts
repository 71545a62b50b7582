import { BlockList, isIP } from 'node:net';

/**
 * Where Portico may send webhooks. In production: https only, and never to this host, its networks or
 * a cloud metadata service (server-side request forgery): loopback, link-local (169.254.0.0/16, where
 * metadata services live, and fe80::/10), private and shared ranges, unspecified and multicast
 * addresses, and the metadata host names. The address is checked at registration when the URL names
 * one, and again for every address a host name resolves to when an attempt connects (DNS rebinding).
 * In sandbox mode http and any address are allowed (an app under development on localhost).
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

const BLOCKED_HOSTS = [/^localhost$/i, /\.localhost$/i, /^metadata(\.google\.internal)?$/i];

export type WebhookMode = 'sandbox' | 'production';

/** Whether an address (IPv4 or IPv6, IPv4-mapped included) is refused in production. */
export function blockedAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return BLOCKED.check(mapped[1], 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Why the URL may not receive webhooks in this mode, or undefined when it may. */
export function webhookUrlRefusal(value: string, mode: WebhookMode): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (url.username || url.password) return 'url must not carry credentials';
  if (url.hash) return 'url must not have a fragment';
  if (mode === 'sandbox')
    return ['http:', 'https:'].includes(url.protocol)
      ? undefined
      : 'url must be an http or https URL';
  if (url.protocol !== 'https:') return 'url must be an https URL in production mode';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (BLOCKED_HOSTS.some((pattern) => pattern.test(host)))
    return `url must not name ${host} (a local or metadata host)`;
  if (isIP(host) && blockedAddress(host))
    return `url must not name ${host} (loopback, link-local, private or metadata address)`;
  return undefined;
}
