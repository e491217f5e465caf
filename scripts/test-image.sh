#!/usr/bin/env bash
# Builds the test image's root filesystem with debootstrap (minbase,
# Debian bookworm) once per machine and prints its path. Later runs reuse
# it. Needs root and Debian's debootstrap (installed here when missing).
#
#   TALON_TEST_CACHE   where to keep it (default /var/cache/talon-test)
#   TALON_TEST_MIRROR  the Debian mirror (default: the one apt uses)
set -euo pipefail
cache=${TALON_TEST_CACHE:-/var/cache/talon-test}
dest=$cache/debian-bookworm-minbase
if [ -f "$dest.complete" ]; then
  echo "$dest"
  exit 0
fi
if ! command -v debootstrap >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq debootstrap >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
fi
mirror=${TALON_TEST_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$( (grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null || true) \
    | head -1 | awk '{print $2}')
  mirror=${mirror:-http://deb.debian.org/debian}
fi
mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building the test image with debootstrap from $mirror (once per machine)…" >&2
debootstrap --variant=minbase bookworm "$tmp/rootfs" "$mirror" >"$tmp/debootstrap.log" 2>&1 || {
  tail -20 "$tmp/debootstrap.log" >&2
  exit 1
}
rm -rf "$tmp/rootfs/var/cache/apt/archives/"*.deb "$tmp/rootfs/var/lib/apt/lists/"*
rm -rf "$dest"
mv "$tmp/rootfs" "$dest"
touch "$dest.complete"
echo "$dest"
