#!/usr/bin/env bash
# Builds the console into dist/ (served by the gateway at /console/):
# installs the pinned packages from package-lock.json, builds with Vite,
# then reports the entry bundle's gzipped size and every chunk, and fails
# if the entry is over budget or carries xterm (the terminal's chunk must
# load only on the terminal page).
set -euo pipefail
cd "$(dirname "$0")"
# Vite 8 needs Node 20.19 or later (Debian 12's own nodejs is 18).
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' \
  || { echo "console/build.sh: Node $(node --version) is too old; Vite 8 needs 20.19 or later" >&2; exit 1; }
npm ci --no-audit --no-fund
node_modules/.bin/vite build --logLevel warn
node scripts/size.mjs
