/**
 * Why uWebSockets.js does not load, said in the system's terms rather than in uWS's own first
 * line (which blames the Node version whatever failed): from the loader errors each kind of
 * system gives, with the platform facts the server reads.
 */
import t from 'tap';
import { thisPlatform, uwsLoadFailure, type Platform } from '../../../src/web/http/transport.ts';

const UWS_SAYS =
  'This version of uWS.js (v20.57.0) supports only Node.js versions 20, 22, 24 and 25 on (glibc) Linux, macOS and Windows, on Tier 1 platforms (https://github.com/nodejs/node/blob/master/BUILDING.md#platform-list).\n\n';
const debian12: Platform = { node: '20.20.2', abi: '115', os: 'linux', arch: 'x64', glibc: '2.36' };

t.test('an older glibc: the one here and the one the build needs', async (t) => {
  const error = new Error(
    `${UWS_SAYS}Error: /lib/x86_64-linux-gnu/libc.so.6: version \`GLIBC_2.38' not found (required by /app/node_modules/uWebSockets.js/uws_linux_x64_115.node)`,
  );
  t.equal(
    uwsLoadFailure(error, debian12),
    'glibc 2.36 here is older than the glibc 2.38 its linux-x64 build for Node 20 (ABI 115) needs',
  );
  t.equal(
    uwsLoadFailure(error, { ...debian12, node: '24.21.0', abi: '137', glibc: '2.35' }),
    'glibc 2.35 here is older than the glibc 2.38 its linux-x64 build for Node 24 (ABI 137) needs',
    'both versions read, none assumed',
  );
});

t.test('a Node the package has no build for', async (t) => {
  const error = new Error(
    `${UWS_SAYS}Error: Cannot find module './uws_linux_x64_131.node'\nRequire stack:\n- /app/node_modules/uWebSockets.js/uws.js`,
  );
  t.equal(
    uwsLoadFailure(error, { ...debian12, node: '23.11.0', abi: '131' }),
    'the package has no build for Node 23.11.0 (ABI 131) on linux-x64',
  );
});

t.test('musl: no glibc at all', async (t) => {
  const error = new Error(
    `${UWS_SAYS}Error: Error loading shared library ld-linux-x86-64.so.2: No such file or directory (needed by /app/node_modules/uWebSockets.js/uws_linux_x64_137.node)`,
  );
  t.equal(
    uwsLoadFailure(error, {
      node: '24.21.0',
      abi: '137',
      os: 'linux',
      arch: 'x64',
      glibc: undefined,
    }),
    "its linux-x64 build for Node 24 (ABI 137) needs glibc, and this system's C library is another (musl?)",
  );
});

t.test("anything else: the loader's own last line, never uWS's first", async (t) => {
  const error = new Error(`${UWS_SAYS}Error: something else broke`);
  t.equal(
    uwsLoadFailure(error, { ...debian12, os: 'darwin', glibc: undefined }),
    'Error: something else broke',
  );
  t.equal(uwsLoadFailure('not an Error', debian12), 'not an Error', 'a thrown non-Error too');
});

t.test('the platform read from this process', async (t) => {
  const platform = thisPlatform();
  t.equal(platform.node, process.versions.node);
  t.equal(platform.abi, process.versions.modules);
  t.equal(platform.os, process.platform);
  t.equal(platform.arch, process.arch);
  if (process.platform === 'linux' && platform.glibc !== undefined)
    t.match(platform.glibc, /^\d+\.\d+/, 'the running glibc, from the process report');
});
