#!/usr/bin/env bash
# Records the contract as released: proto/released.binpb, the buf image
# that CI's `buf breaking` compares every change with. Run it when a
# release ships, or to accept an intended break (a field renamed, a
# method removed): in the same commit as the break, saying why.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUF=${BUF:-$ROOT/.tools/node_modules/.bin/buf}
cd "$ROOT/proto"
"$BUF" build -o released.binpb
echo "proto/released.binpb: the contract as of $(git -C "$ROOT" rev-parse --short HEAD)"
