/**
 * The SSRF guard: a webhook may only reach public addresses. A URL is checked when it is
 * saved and again before every attempt (DNS answers change); the attempt then connects to
 * the very address that was checked (the sender pins it), so a second DNS answer can never
 * swap in an internal one. WEBHOOK_ALLOW_PRIVATE=1 turns the address check off (development,
 * tests), never the URL rules.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export const MAX_URL_LENGTH = 2048;

/** Ranges no webhook may reach: IANA special-purpose blocks that are not globally routable. */
const REFUSED: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'this network'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared address space (carrier NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.88.99.0', 24, 'ipv4', '6to4 relay anycast'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved, broadcast'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['100::', 64, 'ipv6', 'discard-only'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  ['fc00::', 7, 'ipv6', 'unique local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];

const lists = REFUSED.map(([network, prefix, type, why]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, type);
  return { list, type, why };
});

/** Why this address is refused, or null when it is public. */
export function refusedAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const embedded = embeddedIpv4(address);
    // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and
    // 6to4 (2002::/16) forms reach the IPv4 address inside: judge that one.
    if (embedded) return refusedAddress(embedded);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const entry of lists) if (entry.type === type && entry.list.check(address, type)) return entry.why;
  return null;
}

function ipv6Words(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((w) => parseInt(w, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

function embeddedIpv4(address: string): string | null {
  const w = ipv6Words(address);
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && w[5] === 0xffff) return quad(w[6]!, w[7]!);
  if (zeros(0, 6) && (w[6]! > 0 || w[7]! > 1)) return quad(w[6]!, w[7]!);
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return quad(w[6]!, w[7]!);
  if (w[0] === 0x2002) return quad(w[1]!, w[2]!);
  return null;
}

/** Problems with a webhook URL as text (scheme, credentials, length), before any DNS. */
export function urlProblem(text: string): string | null {
  if (text.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must use http or https';
  if (url.username || url.password) return 'must not embed credentials (put a token in the path or query instead)';
  if (url.hash) return 'must not have a fragment';
  if (!url.hostname) return 'must name a host';
  return null;
}

export interface Target {
  url: URL;
  /** The address the connection must use (checked), and its family. */
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves the URL's host and checks every address it gave: one internal answer refuses the
 * host. Throws a TargetRefused that says why.
 */
export async function resolveTarget(text: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<Target> {
  const problem = urlProblem(text);
  if (problem) throw new TargetRefused(`The URL ${problem}`);
  const url = new URL(text);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let answers: { address: string; family: number }[];
  if (isIP(host)) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await resolve(host);
    } catch (error) {
      throw new TargetRefused(`The host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
  }
  if (answers.length === 0) throw new TargetRefused(`The host ${host} does not resolve`);
  if (!allowPrivate) {
    for (const { address } of answers) {
      const why = refusedAddress(address);
      if (why) throw new TargetRefused(`The host ${host} resolves to ${address}, a ${why} address; webhooks only reach public addresses`);
    }
  }
  const chosen = answers[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}
