/**
 * Whether a uWebSockets.js build loads on this Node and libc: else every server serves on
 * node:http. Its own module, importing nothing else: test/run.ts reads it before any test runs.
 */
import { createRequire } from 'node:module';

export const uwsLoads = (() => {
  try {
    createRequire(import.meta.url)('uWebSockets.js');
    return true;
  } catch {
    return false;
  }
})();
