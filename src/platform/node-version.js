// @ts-check
/**
 * The Node versions flowplan runs on, checked first thing by `npm start` and the `flowplan`
 * command. Below 20.12, `crypto.hash` is missing. Every newer Node serves: on uWebSockets.js
 * where a build of it loads, else on node:http (src/web/http/transport.ts); README's Runtime
 * table says which are tested where. Keep in step with package.json `engines`
 * (test/ops/runtime.test.ts checks that they agree). Plain JavaScript (type-checked through its
 * JSDoc): bin/flowplan.js checks the version before any TypeScript loader is registered, which
 * `flowplan --help` never needs.
 */
export const SUPPORTED_NODE = '>=20.12';

/**
 * The one line to print when `version` (x.y.z) is outside SUPPORTED_NODE; null when it is inside.
 * @param {string} [version]
 * @returns {string | null}
 */
export function unsupportedNode(version = process.versions.node) {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 20 || (major === 20 && minor >= 12)) return null;
  return `flowplan: Node ${version} is not supported: flowplan runs on Node ${SUPPORTED_NODE}, because it uses APIs that Node 20.12 added (README: Runtime).`;
}

/** Exits 1 with one line on stderr, not a stack trace, on an unsupported Node. */
export function refuseUnsupportedNode() {
  const message = unsupportedNode();
  if (message === null) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
