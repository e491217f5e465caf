#!/usr/bin/env bash
# Sets up and runs Talon on the embedded defaults: installs runc when it is
# missing (as root, from Debian's packages), builds `talon` and
# `talon-agent`, and starts `talon up` (control plane + embedded worker).
# Extra arguments go to `talon up`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v runc >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runc >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runc >/dev/null; }
fi
cargo build --release -p talon-server -p talon-agent
exec ./target/release/talon up "$@"
