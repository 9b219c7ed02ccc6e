/**
 * Issue 30, item 12: what was mailed to a person and what their digest holds are theirs. A
 * member reads their own deliveries and digest; another member's answer 403 FORBIDDEN, as
 * changing their preferences does; an admin reads anyone's.
 */
import t from 'tap';
import { member, startFlowServer } from '../helpers/flows.ts';
import { personToken } from '../helpers/people.ts';
import { assertError } from '../helpers/server.ts';
import type { Refusal } from '../helpers/wire.ts';

t.test(
  "a member reads their own deliveries and digest, not another member's; an admin reads both",
  async (t) => {
    const s = await startFlowServer(t);
    const ada = await member(s, 'Ada');
    const bob = await member(s, 'Bob');
    const adaToken = await personToken(s, ada);

    for (const path of ['/v1/notifications/deliveries', '/v1/notifications/digest']) {
      t.equal(
        (await s.api('GET', `${path}?memberId=${ada}`, { token: adaToken })).status,
        200,
        `${path}: her own`,
      );
      const other = await s.api<Refusal>('GET', `${path}?memberId=${bob}`, { token: adaToken });
      assertError(t, other, 403, 'FORBIDDEN');
      t.match(other.body.error.message, /needs role admin/, `${path}: says what it needs`);
      for (const whose of [ada, bob]) {
        t.equal(
          (await s.api('GET', `${path}?memberId=${whose}`, { token: s.adminKey })).status,
          200,
          `${path}: the admin reads anyone's`,
        );
      }
    }
  },
);
