/** Bearer secrets and their hashes, and memory-hard password hashing (scrypt). */
import { hash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** A bearer secret (`fpk_`, `fpa_`, `fpr_`, `fps_`): 32 random bytes. */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** Secrets carry 256 random bits, so a fast hash is enough to keep them unreadable at rest. */
export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

export function sameSecret(hashA: string, hashB: string): boolean {
  const a = Buffer.from(hashA, 'hex');
  const b = Buffer.from(hashB, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

// OWASP's scrypt floor: N=2^17, r=8, p=1 (128 MiB), stored with its parameters.
const SCRYPT = { N: 2 ** 17, r: 8, p: 1, maxmem: 256 * 1024 * 1024 } as const;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, 32, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** `cost.N` below the floor is for test fixtures only (the floor costs 1-2 s of CPU a hash on a small machine). */
export async function hashPassword(
  password: string,
  cost: { N: number } = SCRYPT,
): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { ...SCRYPT, N: cost.N });
  return `scrypt$${cost.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
