#!/usr/bin/env bash
# Regenerates src/generated/schema.ts (the API's types for openapi-fetch)
# from the gateway's OpenAPI document with openapi-typescript, pinned in
# package.json (7.13.0, the TypeScript SDK's generator). Deterministic:
# the same document gives the same file, so CI can regenerate it and
# compare with what is committed.
set -euo pipefail
cd "$(dirname "$0")"
DOC=../../gateway-rest/openapi/openapi.json
OUT=src/generated/schema.ts
WANT=7.13.0
if [ ! -x node_modules/.bin/openapi-typescript ] \
  || ! grep -q "\"version\": \"$WANT\"" node_modules/openapi-typescript/package.json; then
  npm ci --no-audit --no-fund >/dev/null
fi
mkdir -p "$(dirname "$OUT")"
node_modules/.bin/openapi-typescript "$DOC" -o "$OUT" >/dev/null 2>&1
echo "generated $OUT from $DOC"
