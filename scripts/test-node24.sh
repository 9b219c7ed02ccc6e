#!/usr/bin/env bash
# `npm run test:node24`: the unit tier and the files that exercise the transport (the edge,
# sessions and the recompute pool, streams, exports, public pages) on Node 24, every server held
# to uWebSockets.js (HTTP_TRANSPORT=uws: a start that cannot load it fails instead of falling
# back). On a glibc older than 2.38, Node 24 runs on a Debian 13 root's libraries
# (scripts/node24-runtime.sh). Extra arguments replace the list of files.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE=$(bash scripts/node24-runtime.sh)
"$NODE" -e "require('uWebSockets.js')" || {
  echo "test:node24: uWebSockets.js does not load on $("$NODE" --version)" >&2
  exit 1
}
shopt -s globstar
if [ $# -eq 0 ]; then
  mapfile -t files < <(printf '%s\n' test/**/*.unit.test.ts test/web/http/*.test.ts \
    test/services/flows/*.test.ts test/services/events/*.test.ts test/services/exports/*.test.ts \
    test/web/public/*.test.ts test/ops/runtime.test.ts test/ops/dockerfile.test.ts | sort -u)
  set -- "${files[@]}"
fi
echo "test:node24: $("$NODE" --version) on uWebSockets.js, $# arguments" >&2
# PATH first: npm scripts and tap's children that run `node` get this one too.
export PATH="$(dirname "$NODE"):$PATH"
HTTP_TRANSPORT=uws exec "$NODE" --import tsx test/run.ts "$@"
