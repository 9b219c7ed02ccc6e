/** Who a change is attributed to: the person for person tokens, else the credential (spec §5). */
import type { Principal } from '../auth/principal.ts';

export function actorId(principal: Principal): string {
  return principal.userId ?? principal.credentialId;
}
