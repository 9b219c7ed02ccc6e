/**
 * Who is asking, for the per-address budgets (sign-in, failed credentials, routes without
 * a credential). Behind a proxy every client arrives from the proxy's address, so TRUST_PROXY
 * says which hops may name the client in X-Forwarded-For: a hop count (the n proxies
 * nearest to us) or a list of CIDRs (any hop inside them). Unset, the header is ignored:
 * anyone can write it. A budget keys an IPv6 client by its /64, the block one subscriber
 * is usually given, so a client cannot multiply its budget by rotating addresses within it.
 */
import ipaddr from 'ipaddr.js';

export type TrustProxy =
  { hops: number } | { ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] } | null;

/** TRUST_PROXY: unset or empty → null; `2` → two hops; `10.0.0.0/8, 192.168.1.7` → those ranges. */
export function parseTrustProxy(raw: string | undefined): TrustProxy {
  if (raw === undefined || raw.trim() === '') return null;
  if (/^\d+$/.test(raw.trim())) {
    const hops = Number(raw.trim());
    if (hops < 1 || hops > 16)
      throw new Error(`TRUST_PROXY as a hop count must be 1 to 16, got ${raw}`);
    return { hops };
  }
  const ranges = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
      try {
        if (part.includes('/')) return ipaddr.parseCIDR(part);
        const address = ipaddr.parse(part);
        return [address, address.kind() === 'ipv4' ? 32 : 128];
      } catch {
        throw new Error(
          `TRUST_PROXY must be a hop count or a comma-separated list of addresses and CIDRs, got ${JSON.stringify(part)}`,
        );
      }
    });
  return { ranges };
}

/** An address in its plain form: IPv4-mapped IPv6 as IPv4; null when it does not parse. */
function normalise(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  try {
    return ipaddr.process(text.trim().replace(/^\[|\]$/g, ''));
  } catch {
    return null;
  }
}

/**
 * The peer's address in its plain form, remembered: every request asks, from a handful of
 * peers (proxies, keep-alive clients), and parsing it each time was a measurable share of
 * a request's cost (bench:http). Bounded: emptied when full.
 */
const peers = new Map<string, string>();
const PEERS_REMEMBERED = 4096;
function peerText(peer: string): string {
  let text = peers.get(peer);
  if (text === undefined) {
    text = normalise(peer)?.toString() ?? peer;
    if (peers.size >= PEERS_REMEMBERED) peers.clear();
    peers.set(peer, text);
  }
  return text;
}

function trusted(
  address: ipaddr.IPv4 | ipaddr.IPv6,
  ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][],
): boolean {
  return ranges.some(
    ([range, bits]) => range.kind() === address.kind() && address.match(range, bits),
  );
}

/**
 * The client's address: the peer's, or, through trusted proxies, the nearest untrusted
 * address of X-Forwarded-For (read right to left, as each proxy appends the hop it saw).
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | undefined,
  trust: TrustProxy,
): string {
  if (!trust || !forwardedFor) return peerText(peer);
  const peerAddress = normalise(peer);
  if (!peerAddress) return peer;
  const chain = forwardedFor.split(',').map(normalise);
  if ('hops' in trust) {
    // The peer is the nearest proxy; each further trusted hop is one more entry from the right.
    const index = chain.length - trust.hops;
    const named = chain[Math.max(index, 0)];
    return (named ?? peerAddress).toString();
  }
  if (!trusted(peerAddress, trust.ranges)) return peerAddress.toString();
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = chain[i];
    if (!hop) return peerAddress.toString(); // a garbled header names no one
    if (!trusted(hop, trust.ranges) || i === 0) return hop.toString();
  }
  return peerAddress.toString();
}

/**
 * The key of an address in a per-address budget: IPv4 as is, IPv6 by its /64. Ours: ipaddr.js
 * parses, but which block counts as one client is this server's policy, not a library's.
 */
export function addressBucket(address: string): string {
  const parsed = normalise(address);
  if (!parsed) return address;
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}
