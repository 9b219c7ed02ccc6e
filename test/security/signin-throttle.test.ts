/**
 * Issue 17, item 7: the sign-in throttle. An attempt is counted before its password is checked,
 * so a burst cannot slip past the limit; one account from one address is locked after a few
 * failures, while the account itself is only slowed, so failing on purpose from elsewhere never
 * locks the real person out; addresses are the client's as the edge resolves them through
 * TRUST_PROXY, IPv6 grouped by /64. Through the app's sign-in form, as a browser posts it.
 */
import t from 'tap';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { createPerson } from '../helpers/people.ts';
import { Agent } from '../services/auth/agent.ts';

const PASSWORD = 'correct horse battery staple';
/** The documented budgets (README, Signing people in): per account and address, per address, within 15 minutes. */
const LIMITS = { pair: 5, address: 20 };
/** An account's attempts beyond 5 within 15 minutes each wait 0.25 s, doubling, at most 4 s. */
const accountDelayMs = (previous: number) =>
  previous < 5 ? 0 : Math.min(4000, 250 * 2 ** (previous - 5));
let people = 0;

async function newPerson(s: TestServer): Promise<string> {
  const email = `person${++people}@example.com`;
  await createPerson(s.sql, {
    email,
    name: `Person ${people}`,
    password: PASSWORD,
    workspaceId: s.workspaceId,
    role: 'member',
  });
  return email;
}

/** A browser at one client address (as the trusted proxy in front names it), until it signs in. */
async function browserAt(s: TestServer, address: string) {
  const agent = new Agent(s.url);
  const page = await agent.get('/app/signin');
  return async (email: string, password: string) => {
    const started = performance.now();
    const res = await agent.post('/app/signin', { email, password }, page, {
      'x-forwarded-for': address,
    });
    return { status: res.status, ms: performance.now() - started };
  };
}

const statuses = (results: { status: number }[]) =>
  results
    .map((r) => r.status)
    .sort()
    .join(' ');

t.test('sign-in throttle behind a trusted proxy', async (t) => {
  // The test client reaches the server over loopback: that peer is the one trusted hop.
  const s = await startTestServer(t, {}, { TRUST_PROXY: '1' });

  t.test(
    '12 wrong passwords at once from one address: at most the limit are checked',
    async (t) => {
      const email = await newPerson(s);
      const attacker = await browserAt(s, '203.0.113.5');
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => attacker(email, `wrong ${i}`)),
      );
      const checked = results.filter((r) => r.status === 401).length;
      const refused = results.filter((r) => r.status === 429).length;
      t.equal(checked + refused, 12, `every attempt was checked or refused: ${statuses(results)}`);
      t.ok(checked <= LIMITS.pair, `at most ${LIMITS.pair} checked (${checked})`);
      t.equal(refused, 12 - checked, 'the rest refused without a check');
      t.equal(
        (await attacker(email, PASSWORD)).status,
        429,
        'that address stays locked out of the account, even with the right password',
      );

      const owner = await browserAt(s, '198.51.100.20');
      t.equal(
        (await owner(email, PASSWORD)).status,
        303,
        'the real person signs in from their own address',
      );
    },
  );

  t.test('failures from many addresses slow the account, and never lock it', async (t) => {
    const email = await newPerson(s);
    const addresses = ['203.0.113.11', '203.0.113.12'];
    const runs = await Promise.all(
      addresses.map(async (address) => {
        const attacker = await browserAt(s, address);
        const results = [];
        for (let i = 0; i < LIMITS.pair; i++)
          results.push(await attacker(email, `wrong ${address} ${i}`));
        return results;
      }),
    );
    t.equal(
      statuses(runs.flat()),
      Array(addresses.length * LIMITS.pair)
        .fill('401')
        .join(' '),
      'each address had its own attempts, each checked',
    );
    const owner = await browserAt(s, '198.51.100.21');
    const signedIn = await owner(email, PASSWORD);
    t.equal(signedIn.status, 303, 'the real person still gets in');
    const delay = accountDelayMs(addresses.length * LIMITS.pair);
    t.ok(
      delay > 0 && signedIn.ms >= delay - 5,
      `after the account's delay (${signedIn.ms.toFixed(0)} ms ≥ ${delay} ms)`,
    );
  });

  t.test('two IPv6 addresses in one /64 share a budget', async (t) => {
    const in64 = (prefix: string) =>
      Promise.all(['::1', '::2', ':ffff:ffff:ffff:3'].map((host) => browserAt(s, prefix + host)));

    // One account: the pair's failures add up across the /64.
    let [one, two, three] = await in64('2001:db8:a:b');
    const email = await newPerson(s);
    for (let i = 0; i < LIMITS.pair; i++)
      t.equal((await (i % 2 ? two! : one!)(email, `wrong ${i}`)).status, 401);
    t.equal(
      (await three!(email, PASSWORD)).status,
      429,
      'a third address of the /64 is locked out of that account too',
    );
    const elsewhere = await browserAt(s, '2001:db8:a:c::1');
    t.equal((await elsewhere(email, PASSWORD)).status, 303, 'another /64 is another client');

    // Many accounts: the address budget is the /64's.
    [one, two, three] = await in64('2001:db8:1:2');
    const emails = [];
    for (let i = 0; i < LIMITS.address; i++) emails.push(await newPerson(s));
    const results = [];
    for (const [i, guessed] of emails.entries())
      results.push(await (i % 2 ? two! : one!)(guessed, 'wrong'));
    t.equal(
      statuses(results),
      Array(LIMITS.address).fill('401').join(' '),
      `${LIMITS.address} guesses checked`,
    );
    const target = await newPerson(s);
    t.equal(
      (await three!(target, PASSWORD)).status,
      429,
      'then the whole /64 is refused, whatever the account',
    );
    t.equal(
      (await (await browserAt(s, '2001:db8:1:3::1'))(target, PASSWORD)).status,
      303,
      'another /64 is not',
    );
  });
});

t.test('without TRUST_PROXY, X-Forwarded-For names nobody', async (t) => {
  const s = await startTestServer(t);
  const email = await newPerson(s);
  for (let i = 0; i < LIMITS.pair; i++)
    t.equal((await (await browserAt(s, `203.0.113.${100 + i}`))(email, `wrong ${i}`)).status, 401);
  const rotated = await browserAt(s, '198.51.100.99');
  t.equal(
    (await rotated(email, PASSWORD)).status,
    429,
    'a forged header does not buy a fresh budget',
  );
});
