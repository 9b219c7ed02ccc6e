/** Who the client is behind proxies (TRUST_PROXY), and how per-address budgets group addresses. */
import t from 'tap';
import {
  addressBucket,
  clientAddress,
  parseTrustProxy,
} from '../../src/platform/client-address.ts';

t.test('without TRUST_PROXY, X-Forwarded-For is ignored: anyone can write it', async (t) => {
  t.equal(clientAddress('203.0.113.9', '198.51.100.1', null), '203.0.113.9');
  t.equal(
    clientAddress('::ffff:203.0.113.9', undefined, null),
    '203.0.113.9',
    'IPv4-mapped IPv6 is the IPv4 address',
  );
});

t.test('a hop count trusts that many proxies nearest to us', async (t) => {
  const one = parseTrustProxy('1');
  t.equal(
    clientAddress('10.0.0.2', '198.51.100.1', one),
    '198.51.100.1',
    'the proxy names the client',
  );
  t.equal(
    clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.1', one),
    '198.51.100.1',
    'what the client wrote itself is not believed',
  );
  const two = parseTrustProxy('2');
  t.equal(clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.1, 10.0.0.3', two), '198.51.100.1');
  t.equal(
    clientAddress('10.0.0.2', '198.51.100.1', two),
    '198.51.100.1',
    'a shorter chain: its first entry',
  );
  t.equal(clientAddress('10.0.0.2', 'garbage', one), '10.0.0.2', 'a garbled header names no one');
});

t.test('CIDRs trust the hops inside them, right to left', async (t) => {
  const trust = parseTrustProxy('10.0.0.0/8, 2001:db8::/32');
  t.equal(clientAddress('10.1.2.3', '6.6.6.6, 198.51.100.1, 10.9.9.9', trust), '198.51.100.1');
  t.equal(clientAddress('2001:db8::1', '2001:db8::2, 2a00:1450::5', trust), '2a00:1450::5');
  t.equal(
    clientAddress('198.51.100.7', '6.6.6.6', trust),
    '198.51.100.7',
    'an untrusted peer is the client, whatever it writes',
  );
  t.equal(
    clientAddress('10.1.2.3', '10.2.2.2', trust),
    '10.2.2.2',
    'every hop trusted: the first is the client',
  );
});

t.test('TRUST_PROXY is validated', async (t) => {
  t.equal(parseTrustProxy(undefined), null);
  t.equal(parseTrustProxy(''), null);
  t.throws(() => parseTrustProxy('0'));
  t.throws(() => parseTrustProxy('10.0.0.0/99'));
  t.throws(() => parseTrustProxy('proxy.example.com'));
});

t.test('budgets group IPv6 by /64', async (t) => {
  t.equal(
    addressBucket('2001:db8:1:2:aaaa::1'),
    addressBucket('2001:db8:1:2:ffff:1:2:3'),
    'one /64, one budget',
  );
  t.not(
    addressBucket('2001:db8:1:2::1'),
    addressBucket('2001:db8:1:3::1'),
    'the next /64 is another',
  );
  t.equal(addressBucket('::ffff:192.0.2.1'), '192.0.2.1');
  t.equal(addressBucket('192.0.2.1'), '192.0.2.1');
});
