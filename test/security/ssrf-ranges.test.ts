/**
 * The SSRF guard against the IANA IPv4 and IPv6 Special-Purpose Address Registries: every
 * block is refused (its first, middle and last address), every translation form of IPv6 that
 * carries an IPv4 address is judged by that address (a private one inside is refused, a public
 * one passes), and ordinary public addresses of both families pass. The full table goes
 * through the guard itself; a sample of each block goes through POST /v1/webhooks as a client
 * would send it.
 */
import t from 'tap';
import ipaddr from 'ipaddr.js';
import { refusedAddress, resolveTarget } from '../../src/services/webhooks/address-guard.ts';
import { startFlowServer } from '../helpers/flows.ts';
import { assertError } from '../helpers/server.ts';
import type { Refusal, WebhookWithSecret } from '../helpers/wire.ts';

/** IANA IPv4 Special-Purpose Address Registry, plus multicast (224/4) from the address space registry. */
const IPV4_BLOCKS: [string, string][] = [
  ['0.0.0.0/8', 'this network'],
  ['10.0.0.0/8', 'private-use'],
  ['100.64.0.0/10', 'shared address space'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link local'],
  ['172.16.0.0/12', 'private-use'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.0.0/29', 'IPv4 service continuity prefix'],
  ['192.0.0.8/32', 'IPv4 dummy address'],
  ['192.0.0.9/32', 'port control protocol anycast'],
  ['192.0.0.10/32', 'TURN anycast'],
  ['192.0.0.170/31', 'NAT64/DNS64 discovery'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private-use'],
  ['192.175.48.0/24', 'direct delegation AS112 service'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['255.255.255.255/32', 'limited broadcast'],
];

/** IANA IPv6 Special-Purpose Address Registry (translation blocks are in TRANSLATIONS below), plus multicast. */
const IPV6_BLOCKS: [string, string][] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['100::/64', 'discard-only'],
  ['2001::/23', 'IETF protocol assignments'],
  ['2001:1::1/128', 'port control protocol anycast'],
  ['2001:1::2/128', 'TURN anycast'],
  ['2001:1::3/128', 'DNS-SD service registration protocol anycast'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:3::/32', 'AMT'],
  ['2001:4:112::/48', 'AS112-v6'],
  ['2001:10::/28', 'deprecated ORCHID'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:30::/28', 'drone remote ID protocol entity tags'],
  ['2001:db8::/32', 'documentation'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing SIDs'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local unicast'],
  ['fec0::/10', 'deprecated site-local'],
  ['ff00::/8', 'multicast'],
  // Not special-purpose, but not global unicast either (reserved by the IETF): the IPv4-compatible
  // ::a.b.c.d form and the space around the NAT64 prefix.
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:0:0:1::/80', 'beside the NAT64 /96'],
];

const hex = (n: number) => n.toString(16);
const words = (v4: string) => {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  return [(a << 8) | b, (c << 8) | d] as const;
};

/** IPv6 forms that carry an IPv4 address, each as a function of that address. */
const TRANSLATIONS: [string, string, (v4: string) => string[]][] = [
  [
    '::ffff:0:0/96',
    'IPv4-mapped',
    (v4) => [`::ffff:${v4}`, `::ffff:${words(v4).map(hex).join(':')}`],
  ],
  [
    '::ffff:0:0:0/96',
    'IPv4-translated (SIIT)',
    (v4) => [`::ffff:0:${words(v4).map(hex).join(':')}`],
  ],
  [
    '64:ff9b::/96',
    'NAT64 well-known prefix',
    (v4) => [`64:ff9b::${v4}`, `64:ff9b::${words(v4).map(hex).join(':')}`],
  ],
  [
    '64:ff9b:1::/48',
    'NAT64 local-use prefix',
    (v4) => {
      // RFC 6052 §2.2: the address inside a /48, /56, /64 and /96 of the local-use prefix.
      const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
      const w = (hi: number, lo: number) => hex((hi << 8) | lo);
      return [
        `64:ff9b:1:${w(a, b)}:${w(0, c)}:${w(d, 0)}::`,
        `64:ff9b:1:${w(0, a)}:${w(0, b)}:${w(c, d)}::`,
        `64:ff9b:1::${w(0, a)}:${w(b, c)}:${w(d, 0)}:0`,
        `64:ff9b:1:abcd::${words(v4).map(hex).join(':')}`,
      ];
    },
  ],
  ['2002::/16', '6to4', (v4) => [`2002:${words(v4).map(hex).join(':')}::1`]],
  [
    '2001::/32',
    'Teredo',
    (v4) => [
      // As the server (bits 32–63) with a public client, and as the client (the last 32 bits, inverted).
      `2001:0:${words(v4).map(hex).join(':')}:0:0:${words('8.8.8.8')
        .map((x) => hex(x ^ 0xffff))
        .join(':')}`,
      `2001:0:${words('8.8.4.4').map(hex).join(':')}:8000:ffff:${words(v4)
        .map((x) => hex(x ^ 0xffff))
        .join(':')}`,
    ],
  ],
];

const PUBLIC_V4 = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '100.128.0.1',
  '172.32.0.1',
  '192.0.3.1',
  '198.20.0.1',
  '223.255.255.254',
  '11.0.0.1',
];
const PUBLIC_V6 = [
  '2606:4700:4700::1111',
  '2a00:1450:4001::1',
  '2001:200::1',
  '2003::1',
  '2620:4f:8001::1',
  '3fff:1000::1',
  '2c0f:f248::1',
];

/** The first, a middle and the last address of a CIDR block. */
function samples(cidr: string): string[] {
  const [network, prefix] = ipaddr.parseCIDR(cidr);
  const bytes = network.toByteArray();
  const bits = bytes.length * 8;
  const first = bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);
  const size = 1n << BigInt(bits - prefix);
  const at = (n: bigint) => {
    const out: number[] = [];
    for (let i = 0; i < bytes.length; i++) out.unshift(Number((n >> BigInt(8 * i)) & 255n));
    return ipaddr.fromByteArray(out).toString();
  };
  return [...new Set([at(first), at(first + size / 2n), at(first + size - 1n)])];
}

const middle = (cidr: string) => {
  const all = samples(cidr);
  return all[Math.floor(all.length / 2)]!;
};

/** One private or special IPv4 address from each IPv4 block, to hide inside the translation forms. */
const SPECIAL_V4 = IPV4_BLOCKS.map(([cidr]) => middle(cidr));

t.test('every special-purpose address is refused by the guard', async (t) => {
  for (const [cidr, name] of [...IPV4_BLOCKS, ...IPV6_BLOCKS]) {
    for (const address of samples(cidr)) {
      const why = refusedAddress(address);
      t.type(why, 'string', `${address} (${cidr}, ${name}) refused: ${why}`);
    }
  }
});

t.test('translation forms are judged by the IPv4 address inside them', async (t) => {
  for (const [cidr, name, forms] of TRANSLATIONS) {
    for (const v4 of SPECIAL_V4) {
      for (const address of forms(v4)) {
        t.ok(ipaddr.parse(address).match(ipaddr.parseCIDR(cidr)), `${address} is in ${cidr}`);
        t.type(
          refusedAddress(address),
          'string',
          `${address} (${name} of ${v4}) refused: ${refusedAddress(address)}`,
        );
      }
    }
    const publicForms =
      cidr === '64:ff9b:1::/48'
        ? // The local-use prefix's length is the translator's choice: an address passes only when
          // every reading of it is public. This one reads 8.8.8.8 at /48, /56, /64 and /96.
          ['64:ff9b:1:808:8:808:808:808']
        : PUBLIC_V4.slice(0, 3).flatMap(forms);
    for (const address of publicForms)
      t.equal(refusedAddress(address), null, `${address} (${name} of a public address) passes`);
  }
  t.match(
    refusedAddress('64:ff9b::a9fe:a9fe'),
    /NAT64 form of 169\.254\.169\.254, a link-local/,
    'the refusal names the address inside',
  );
  t.match(refusedAddress('2002:a00:1::'), /6to4 form of 10\.0\.0\.1, a private/);
});

t.test('public addresses of both families pass', async (t) => {
  for (const address of [...PUBLIC_V4, ...PUBLIC_V6])
    t.equal(refusedAddress(address), null, `${address} is public`);
});

t.test(
  'a name resolving to a translated internal address is refused, saying which in the log',
  async (t) => {
    const resolver = (address: string) => async () => [{ address, family: 6 }];
    // Said in the server's log (`internal`); the caller hears only that the host is not public.
    await t.rejects(
      resolveTarget('https://nat64.example.test/hook', false, resolver('64:ff9b::a9fe:a9fe')),
      {
        message: /^The host nat64\.example\.test is not a public address; /,
        internal:
          'nat64.example.test resolves to 64:ff9b::a9fe:a9fe, a NAT64 form of 169.254.169.254, a link-local (cloud metadata) address',
      },
    );
    await t.rejects(
      resolveTarget('https://siit.example.test/', false, resolver('::ffff:0:7f00:1')),
      {
        message: /^The host siit\.example\.test is not a public address; /,
        internal: /IPv4-translated \(SIIT\) form of 127\.0\.0\.1, a loopback address$/,
      },
    );
    const target = await resolveTarget(
      'https://nat64.example.test/hook',
      false,
      resolver('64:ff9b::5db8:d822'),
    );
    t.equal(
      target.address,
      '64:ff9b::5db8:d822',
      'a translated public address is the one connected to',
    );
  },
);

t.test(
  'POST /v1/webhooks refuses a URL naming any of them, and saves one naming a public address',
  async (t) => {
    const s = await startFlowServer(t, { webhookAllowPrivate: false });
    const literal = (address: string) => (address.includes(':') ? `[${address}]` : address);
    const refused = [
      ...[...IPV4_BLOCKS, ...IPV6_BLOCKS].map(([cidr]) => middle(cidr)),
      ...TRANSLATIONS.flatMap(([, , forms]) => forms('10.1.2.3').concat(forms('169.254.169.254'))),
    ];
    for (const address of refused) {
      const url = `http://${literal(address)}/hook`;
      const res = await s.api<Refusal>('POST', '/v1/webhooks', {
        token: s.adminKey,
        body: { url, events: ['flow.created'] },
      });
      assertError(t, res, 400, 'VALIDATION_FAILED', url);
      t.equal(
        res.body?.error?.details?.errors?.[0]?.pointer,
        '/url',
        `${url}: the problem is the url`,
      );
    }
    const [none] = await s.sql`select count(*)::int as n from webhooks`;
    t.equal(none!.n, 0, 'nothing stored');

    for (const address of [
      '93.184.216.34',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ]) {
      const url = `https://${literal(address)}/hook`;
      const res = await s.api<WebhookWithSecret>('POST', '/v1/webhooks', {
        token: s.adminKey,
        body: { url, events: ['flow.created'] },
      });
      t.equal(res.status, 201, `${url} saved`);
      if (res.status === 201)
        t.equal(
          (await s.api('DELETE', `/v1/webhooks/${res.body.id}`, { token: s.adminKey })).status,
          204,
        );
    }
  },
);
