#!/usr/bin/env bash
# Builds talon-agent as a static binary (glibc's static libc, +crt-static)
# and prints its path. It runs as PID 1 in every sandbox, so it must not
# need the image's libc: an Alpine or scratch image has none of ours.
# Usage: scripts/build-agent.sh [debug|release]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-debug}
triple=$(rustc -vV | sed -n 's/^host: //p')
args=(-p talon-agent --target "$triple")
[ "$profile" = release ] && args+=(--release)
# With an explicit --target, RUSTFLAGS reach only the target's crates,
# not build scripts or proc macros (which can't be static).
RUSTFLAGS="-C target-feature=+crt-static" cargo build --quiet "${args[@]}" >&2
echo "${CARGO_TARGET_DIR:-$PWD/target}/$triple/$profile/talon-agent"
