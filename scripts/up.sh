#!/usr/bin/env bash
# Sets up and runs Talon on the embedded defaults: installs what the build
# and the runtimes need when missing (as root, from Debian's packages:
# libseccomp-dev and pkg-config for libcontainer, runc as the alternative
# adapter, nftables for sandbox egress, npm for the web console), builds
# `talon`, a static `talon-agent` and the web console (clients/console, from
# the npm registry), and starts `talon up` (control plane + embedded worker,
# the console at /console/). Extra arguments go to `talon up`.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
dpkg -s libseccomp-dev >/dev/null 2>&1 || need+=(libseccomp-dev)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v runc >/dev/null || need+=(runc)
# Sandbox egress rules (docs/networking.md).
command -v nft >/dev/null || need+=(nftables)
# The web console is built with Node (Vite).
command -v npm >/dev/null || need+=(npm)
if [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "${need[@]}" >/dev/null; }
fi
cargo build --release -p talon
# The agent is PID 1 in every sandbox, whatever its image: built static.
agent=$(./scripts/build-agent.sh release)
./clients/console/build.sh >&2
exec ./target/release/talon up --agent-path "$agent" --console-dir clients/console/dist "$@"
