// The guard against webhooks aimed inside the network (SSRF): a webhook URL must be http(s), without credentials,
// and its host must resolve to public addresses only. Checked when a webhook is registered (422) and again at every
// delivery, on the address the connection is actually made to (`guardedLookup`, so a DNS answer that changed since,
// or a name that resolves differently each time, cannot reach a private address). WEBHOOK_ALLOW_PRIVATE turns the
// address check off (tests, and a service whose receivers are on its own network).
import dns from 'node:dns';
import net from 'node:net';

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) blocked.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique-local (and fd00:ec2::254, a metadata address)
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) blocked.addSubnet(prefix, bits, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|::|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = parseInt(match[2]!, 16);
  const low = parseInt(match[3]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Why a webhook may not be sent to this IP address, or undefined when it may. */
export function addressProblem(address: string): string | undefined {
  const family = net.isIP(address);
  if (family === 0) return `${address} is not an IP address`;
  const v4 = family === 6 ? embeddedIpv4(address) : address;
  const refused = v4 !== undefined && net.isIPv4(v4) ? blocked.check(v4, 'ipv4') : blocked.check(address, 'ipv6');
  return refused ? `${address} is a loopback, private, link-local or otherwise internal address` : undefined;
}

export class WebhookUrlError extends Error {}

/** The URL, parsed, or WebhookUrlError saying what is wrong with its form. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlError('the URL is not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookUrlError('the URL must be http or https');
  if (url.username !== '' || url.password !== '') throw new WebhookUrlError('the URL may not carry a user name or password');
  if (url.hostname === '') throw new WebhookUrlError('the URL has no host');
  return url;
}

const LOOKUP_TIMEOUT_MS = 5000;

const bare = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/** Resolves the URL's host and refuses it when an address it resolves to is internal (unless `allowPrivate`). */
export async function checkWebhookHost(url: URL, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = bare(url.hostname);
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    let timer: NodeJS.Timeout | undefined;
    try {
      // a resolver that does not answer must not hold the request: 5 seconds at most
      const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS)));
      addresses = (await Promise.race([dns.promises.lookup(host, { all: true, verbatim: true }), late])).map((entry) => entry.address);
    } catch {
      throw new WebhookUrlError(`the host ${host} does not resolve`);
    } finally {
      clearTimeout(timer);
    }
  }
  for (const address of addresses) {
    const problem = addressProblem(address);
    if (problem) throw new WebhookUrlError(`the host ${host} resolves to ${problem}`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses internal addresses: the check is made on the addresses the socket
 * connects to. (An IP literal in the URL is not looked up by node: `checkWebhookHost` checks it before.)
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, entries) => {
      if (error) return callback(error, '');
      const list = entries as dns.LookupAddress[];
      const refused = allowPrivate ? undefined : list.map((entry) => addressProblem(entry.address)).find((problem) => problem !== undefined);
      if (refused) return callback(Object.assign(new Error(`refused: ${refused}`), { code: 'EADDRREFUSED' }), '');
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
      callback(null, first.address, first.family);
    });
  };
}
