/**
 * The SSRF guard: a webhook may only reach public addresses. A URL is checked when it is
 * saved and again before every attempt (DNS answers change); the attempt then connects to
 * the very address that was checked (the sender pins it), so a second DNS answer can never
 * swap in an internal one. WEBHOOK_ALLOW_PRIVATE=1 turns the address check off (development,
 * tests), never the URL rules.
 *
 * Which addresses are special comes from ipaddr.js's tables of the IANA special-purpose
 * registries (`range()`); only `unicast` passes. Translation forms carry an IPv4 address
 * that a translator or tunnel on the way would reach, so that one is judged too.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { MAX_URL_LENGTH } from '../../contract/webhook.schema.ts';

/** What each of ipaddr.js's range names is, for the refusal message ("… a loopback address"). */
const RANGE_TEXT: Record<string, string> = {
  unspecified: 'unspecified ("this network")',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local (cloud metadata)',
  loopback: 'loopback',
  carrierGradeNat: 'shared address space (carrier NAT)',
  private: 'private',
  reserved: 'reserved (documentation, benchmarking or future use)',
  as112: 'AS112 DNS sink',
  amt: 'AMT relay anycast',
  uniqueLocal: 'unique local (private)',
  deprecatedSiteLocal: 'site-local',
  discard: 'discard-only',
  benchmarking: 'benchmarking',
  as112v6: 'AS112 DNS sink',
  deprecatedOrchid: 'ORCHID (not routable)',
  orchid2: 'ORCHIDv2 (not routable)',
  droneRemoteIdProtocolEntityTags: 'drone remote ID tag (not routable)',
  segmentRouting: 'segment routing SID',
};

/**
 * The IPv6 ranges that embed an IPv4 address, with where it sits, per ipaddr.js's range name.
 * ::ffff:0:0/96 (IPv4-mapped) never gets here: ipaddr.process turns it into the IPv4 itself.
 */
const TRANSLATIONS: Record<string, { name: string; embedded: (parts: number[]) => string[] }> = {
  // RFC 6052 well-known NAT64 prefix 64:ff9b::/96 and RFC 8215 local-use 64:ff9b:1::/48.
  rfc6052: { name: 'NAT64', embedded: nat64 },
  // SIIT IPv4-translated addresses ::ffff:0:a.b.c.d (RFC 6145 / RFC 2765).
  rfc6145: { name: 'IPv4-translated (SIIT)', embedded: (p) => [quad(p[6]!, p[7]!)] },
  // 6to4 2002:AABB:CCDD::/48 tunnels to AA.BB.CC.DD (RFC 3056).
  '6to4': { name: '6to4', embedded: (p) => [quad(p[1]!, p[2]!)] },
  // Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC: the server, and the client's address
  // stored inverted (RFC 4380); traffic goes to both.
  teredo: {
    name: 'Teredo',
    embedded: (p) => [quad(p[2]!, p[3]!), quad(p[6]! ^ 0xffff, p[7]! ^ 0xffff)],
  },
};

/** "a loopback", "an unspecified": the words before "address" in a refusal. */
function article(words: string): string {
  return `${/^[aeiou]/i.test(words) ? 'an' : 'a'} ${words}`;
}

function quad(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * The IPv4 a NAT64 translator reads from this address. The well-known prefix is only used
 * at /96 (RFC 6052 §2.1). In the local-use 64:ff9b:1::/48 the translator's prefix may be any
 * of /48, /56, /64 or /96 inside it (RFC 6052 §2.2: bits 64–71 are skipped), which this side
 * cannot know: every reading is returned, and all of them must be public.
 */
function nat64(p: number[]): string[] {
  const bytes = p.flatMap((w) => [w >> 8, w & 255]);
  const at = (...indexes: number[]) => indexes.map((i) => bytes[i]).join('.');
  const wellKnown = at(12, 13, 14, 15);
  if (p[2] === 0) return [wellKnown];
  return [at(6, 7, 9, 10), at(7, 9, 10, 11), at(9, 10, 11, 12), wellKnown];
}

/** Everything in the IPv6 address space outside it is reserved by the IETF (RFC 4291 §2.4). */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/** Why this address is refused (the words before "address"), or null when it is public. */
export function refusedAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'malformed';
  // ipaddr.js reads ::a.b.c.d as if it were ::ffff:a.b.c.d; the socket does not. Judge the
  // address as the URL parser writes it (hex words; the zone does not change the range).
  const text =
    family === 6 ? new URL(`http://[${address.split('%')[0]}]/`).hostname.slice(1, -1) : address;
  // process: ::ffff:a.b.c.d (IPv4-mapped) is that IPv4 address.
  return judge(ipaddr.process(text));
}

function judge(ip: ipaddr.IPv4 | ipaddr.IPv6): string | null {
  // ipaddr.js's typings list fewer names than its tables hold: read it as a string.
  const range: string = ip.range();
  if (ip.kind() === 'ipv6') {
    const translation = TRANSLATIONS[range];
    if (translation) {
      for (const embedded of translation.embedded((ip as ipaddr.IPv6).parts)) {
        const why = judge(ipaddr.IPv4.parse(embedded));
        if (why) return `${translation.name} form of ${embedded}, ${article(why)}`;
      }
      return null;
    }
    // `unicast` is only "in none of the tables": ::a.b.c.d (IPv4-compatible, tunnelled by old
    // stacks), 64:ff9b:0:0:1:: beside the NAT64 /96 and the rest of the IETF's reserve say so too.
    if (range === 'unicast' && !ip.match(GLOBAL_UNICAST))
      return 'reserved (outside the global unicast 2000::/3)';
  }
  if (range === 'unicast') return null;
  return RANGE_TEXT[range] ?? range;
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
  if (url.username || url.password)
    return 'must not embed credentials (put a token in the path or query instead)';
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

export const systemResolver: Resolver = (hostname) =>
  lookup(hostname, { all: true, verbatim: true });

/**
 * Resolves the URL's host and checks every address it gave: one internal answer refuses the
 * host. Throws a TargetRefused that says why, without naming the address (`internal` does, for
 * the log).
 */
export async function resolveTarget(
  text: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<Target> {
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
      throw new TargetRefused(
        `The host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'DNS error'})`,
      );
    }
  }
  if (answers.length === 0) throw new TargetRefused(`The host ${host} does not resolve`);
  if (!allowPrivate) {
    for (const { address } of answers) {
      const why = refusedAddress(address);
      // Which address a name resolves to is the installation's network, not the caller's to
      // learn (a delivery's log is read by viewers too): the message says no more than that.
      if (why)
        throw new TargetRefused(
          `The host ${host} is not a public address; webhooks only reach public addresses ` +
            '(for local testing only, an operator may start the server with WEBHOOK_ALLOW_PRIVATE=1 to reach any)',
          `${host} resolves to ${address}, ${article(why)} address`,
        );
    }
  }
  const chosen = answers[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';

  constructor(
    message: string,
    /** For the server's log only: the internal address the host resolved to, and its kind. */
    readonly internal: string | null = null,
  ) {
    super(message);
  }
}
