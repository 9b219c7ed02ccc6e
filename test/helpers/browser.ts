/**
 * Real Chromium for page tests: Debian's `/usr/bin/chromium` driven by playwright-core
 * (never a downloaded browser). `.ci/run` installs it; where it cannot be installed, the
 * tests that need it are skipped with a message saying so. Screenshots go to
 * `test-artifacts/` (git-ignored) so a failing run leaves something to look at.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type { Test } from 'tap';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = path.resolve('test-artifacts');

/** The browser for one test file, closed at its end; null (and the test skipped) without Chromium. */
export async function openBrowser(t: Test): Promise<Browser | null> {
  if (!existsSync(CHROMIUM)) {
    const reason = `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium): browser tests skipped`;
    await t.test(reason, { skip: reason }, async () => {});
    return null;
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // As root in a container: no sandbox. The rest keeps Chromium off the (closed) network.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
    headless: true,
  });
  t.teardown(() => browser.close());
  return browser;
}

/** Where a screenshot named `name` is kept. */
export function artifact(name: string): string {
  mkdirSync(ARTIFACTS, { recursive: true });
  return path.join(ARTIFACTS, name);
}
