/**
 * The Node versions flowplan runs on, checked first thing by `npm start` and the `flowplan`
 * command, before anything loads uWebSockets.js. Its build here ships native binaries up to
 * Node 20's ABI (115): on a newer Node it would fall back, silently, to an imitation that
 * lacks what the HTTP edge uses (src/web/http/uws/server.ts NativeUwsUnavailable).
 * Below 20.12, `crypto.hash` is missing. Keep in step with package.json `engines`
 * (test/ops/runtime.test.ts checks that they agree).
 */
export const SUPPORTED_NODE = '>=20.12 <21';

/** The one line to print when `version` (x.y.z) is outside SUPPORTED_NODE; null when it is inside. */
export function unsupportedNode(version: string = process.versions.node): string | null {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major === 20 && minor >= 12) return null;
  const why =
    major > 20
      ? `its uWebSockets.js build has native binaries up to Node 20 only (on Node ${major} it falls back to an imitation flowplan cannot serve on)`
      : 'it uses APIs that Node 20.12 added';
  return `flowplan: Node ${version} is not supported: flowplan runs on Node ${SUPPORTED_NODE}, because ${why} (README: Runtime).`;
}

/** Exits 1 with one line on stderr, not a stack trace, on an unsupported Node. */
export function refuseUnsupportedNode(): void {
  const message = unsupportedNode();
  if (message === null) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
