/**
 * The one rule for a new password, wherever one is chosen: invite sign-up, `flowplan user
 * create` and `flowplan user set-password`, and the forms' hints. Length is the measure
 * (NIST SP 800-63B: a floor, no composition rules); the ceiling bounds the scrypt input.
 */
export const MIN_PASSWORD = 10;
export const MAX_PASSWORD = 1024;

/** Why this new password is refused (one sentence), or null when it is fine. */
export function newPasswordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD) return `A password needs at least ${MIN_PASSWORD} characters`;
  if (password.length > MAX_PASSWORD)
    return `A password may have at most ${MAX_PASSWORD} characters`;
  return null;
}
