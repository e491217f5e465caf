#!/usr/bin/env bash
# Regenerates gateway-rest/openapi/openapi.json from the protos: gnostic's
# protoc-gen-openapi (pinned) through buf, then talon-openapi, which makes
# it OpenAPI 3.1 and describes streams and credentials; openapi-3.0.json
# is the same in 3.0, for generators that read 3.0 only (oapi-codegen). CI runs this and fails if the result differs from what is
# committed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
GNOSTIC=v0.7.1
export GOBIN=$ROOT/.tools/bin
if ! go version -m "$GOBIN/protoc-gen-openapi" 2>/dev/null | grep -q "gnostic[[:space:]]*$GNOSTIC"; then
  go install "github.com/google/gnostic/cmd/protoc-gen-openapi@$GNOSTIC"
fi
if [ ! -x .tools/node_modules/.bin/buf ]; then
  mkdir -p .tools
  [ -f .tools/package.json ] || echo '{"name":"talon-tools","private":true}' > .tools/package.json
  (cd .tools && npm install --no-audit --no-fund @bufbuild/buf@1.75.0 >/dev/null)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/buf.gen.yaml" <<YAML
version: v2
plugins:
  - local: $GOBIN/protoc-gen-openapi
    out: $tmp/out
    opt:
      - enum_type=string
      - default_response=true
      - naming=json
YAML
(cd proto && "$ROOT/.tools/node_modules/.bin/buf" generate --template "$tmp/buf.gen.yaml" --path talon/v1)
cargo run --quiet -p talon-gateway --bin talon-openapi -- "$tmp/out/openapi.yaml" > "$tmp/openapi.json"
cargo run --quiet -p talon-gateway --bin talon-openapi -- "$tmp/out/openapi.yaml" --3.0 > "$tmp/openapi-3.0.json"
mv "$tmp/openapi.json" gateway-rest/openapi/openapi.json
mv "$tmp/openapi-3.0.json" gateway-rest/openapi/openapi-3.0.json
rm -f gateway-rest/openapi/openapi-3.0.yaml
echo gateway-rest/openapi/openapi.json
