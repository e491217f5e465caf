#!/usr/bin/env bash
# Regenerates the SDKs' generated layers from the OpenAPI document
# (scripts/gen-openapi.sh makes that from the protos), with pinned
# generators. CI runs it and fails if anything differs from what is
# committed. The Rust SDK needs nothing here: its layer is talon-proto's
# tonic code, generated at build time.
#
#   python      openapi-python-client (httpx)  clients/python/src/talon_sandbox/_api/
#   typescript  openapi-typescript (types for openapi-fetch)  clients/typescript/src/generated/schema.ts
#   go          oapi-codegen (net/http)  clients/go/internal/api/api.gen.go
#   dotnet      openapi-generator's csharp (httpclient)  clients/dotnet/src/Talon.Sdk/Generated/
#   console     openapi-typescript (the web console's types)  clients/console/src/generated/schema.ts
#               (clients/dotnet/generate.sh: Java and Maven fetch the jar)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DOC=gateway-rest/openapi/openapi.json
DOC30=gateway-rest/openapi/openapi-3.0.json
PY_GEN=0.29.1
RUFF=0.14.6
TS_GEN=7.13.0
GO_GEN=v2.8.2

mkdir -p .tools
if [ ! -x .tools/gen-venv/bin/openapi-python-client ] || ! .tools/gen-venv/bin/openapi-python-client --version | grep -q "$PY_GEN"; then
  python3 -m venv --clear .tools/gen-venv
  .tools/gen-venv/bin/pip install --quiet --disable-pip-version-check "openapi-python-client==$PY_GEN" "ruff==$RUFF"
fi
export PATH=$ROOT/.tools/gen-venv/bin:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
openapi-python-client generate --path "$DOC" --output-path "$tmp/py" --meta none >/dev/null
rm -rf clients/python/src/talon_sandbox/_api
mkdir -p clients/python/src/talon_sandbox
mv "$tmp/py" clients/python/src/talon_sandbox/_api

[ -f .tools/package.json ] || echo '{"name":"talon-tools","private":true}' > .tools/package.json
if [ ! -x .tools/node_modules/.bin/openapi-typescript ] || ! grep -q "\"version\": \"$TS_GEN\"" .tools/node_modules/openapi-typescript/package.json; then
  (cd .tools && npm install --no-audit --no-fund "openapi-typescript@$TS_GEN" >/dev/null)
fi
mkdir -p clients/typescript/src/generated
.tools/node_modules/.bin/openapi-typescript "$DOC" -o clients/typescript/src/generated/schema.ts >/dev/null 2>&1

export GOBIN=$ROOT/.tools/bin
if ! go version -m "$GOBIN/oapi-codegen" 2>/dev/null | grep -q "oapi-codegen/v2[[:space:]]*$GO_GEN"; then
  go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$GO_GEN"
fi
mkdir -p clients/go/internal/api
cat > "$tmp/oapi.yaml" <<YAML
package: api
generate:
  models: true
  client: true
output: $ROOT/clients/go/internal/api/api.gen.go
output-options:
  skip-prune: true
YAML
"$GOBIN/oapi-codegen" -config "$tmp/oapi.yaml" "$DOC30"
# Its jar is cached under .tools/ like the other generators.
TALON_TOOLS=$ROOT/.tools clients/dotnet/generate.sh >/dev/null
clients/console/generate.sh >/dev/null
echo "generated: python, typescript, go, dotnet, console"
