#!/usr/bin/env bash
# Runs the benchmarks of bench/README.md on a release build: the figures
# of DESIGN.md §4 as ratios against baselines measured in the same run.
# Root is required (it starts `talon up` with sandboxes and runs runc).
# Usage: scripts/bench.sh [talon-bench flags, e.g. --short]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release -p talon -p talon-bench --bin talon --bin talon-bench
agent=$(./scripts/build-agent.sh release)
mkdir -p target/bench
exec target/release/talon-bench --agent "$agent" --json target/bench/results.json "$@"
