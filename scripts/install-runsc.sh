#!/usr/bin/env bash
# Installs gVisor's runsc once per machine and prints its path. Debian's
# package (0.0~20221219) refuses statx with AT_NO_AUTOMOUNT, so `ls -l`
# fails inside its sandboxes; this builds a pinned release from the Go
# module proxy instead, statically (runsc re-executes itself inside an
# empty chroot, where a dynamic binary's loader is missing).
#
#   TALON_RUNSC_VERSION  the gvisor.dev/gvisor module version to build
#   TALON_RUNSC_DIR      where to install it (default /usr/local/lib/talon-gvisor)
set -euo pipefail
version=${TALON_RUNSC_VERSION:-v0.0.0-20260527191743-a81fd9dd382e}
dir=${TALON_RUNSC_DIR:-/usr/local/lib/talon-gvisor}
bin=$dir/runsc
if [ -x "$bin" ] && [ "$(cat "$dir/version" 2>/dev/null)" = "$version" ]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "install-runsc: needs go on PATH" >&2; exit 1; }
echo "building runsc $version (once per machine)…" >&2
mkdir -p "$dir"
CGO_ENABLED=0 GOBIN="$dir" go install -ldflags=-s "gvisor.dev/gvisor/runsc@$version" >&2
echo "$version" > "$dir/version"
echo "$bin"
