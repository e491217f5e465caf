#!/usr/bin/env bash
# Runs every test of the project: contract lint, formatting, clippy, the
# Rust unit and integration tests (real server processes, SQLite and
# PostgreSQL), and a Python grpcio client against a live `talon up`.
#
# It installs what it needs into the work tree (buf from npm under
# .tools/, grpcio under .venv/) and, when run as root on a machine with
# Debian's PostgreSQL and no TALON_TEST_POSTGRES_URL set, starts the local
# cluster and uses it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

step() { printf '\n==> %s\n' "$*"; }

step "tools"
if [ ! -x .tools/node_modules/.bin/buf ]; then
  mkdir -p .tools
  [ -f .tools/package.json ] || echo '{"name":"talon-tools","private":true}' > .tools/package.json
  (cd .tools && npm install --no-audit --no-fund @bufbuild/buf@1.75.0 >/dev/null)
fi
BUF=$ROOT/.tools/node_modules/.bin/buf
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/pip install --quiet --disable-pip-version-check grpcio==1.76.0 grpcio-reflection==1.76.0 protobuf \
  openapi-spec-validator==0.7.2

if [ -z "${TALON_TEST_POSTGRES_URL:-}" ] && [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
  step "postgresql"
  ver=$(ls /etc/postgresql | sort -n | tail -1)
  pg_ctlcluster "$ver" main start 2>/dev/null || true
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 && break; sleep 0.2; done
  su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'talon-test'\"" >/dev/null
  export TALON_TEST_POSTGRES_URL=postgres://postgres:talon-test@127.0.0.1:5432/postgres
fi

step "buf lint"
(cd proto && "$BUF" lint)

step "OpenAPI: regenerated from the protos, unchanged, and valid"
./scripts/gen-openapi.sh >/dev/null
git diff --exit-code -- gateway-rest/openapi || {
  echo "gateway-rest/openapi differs from what the protos generate: run scripts/gen-openapi.sh and commit" >&2
  exit 1
}
.venv/bin/python -c 'import json, sys
from openapi_spec_validator import validate
validate(json.load(open(sys.argv[1])))
print("valid OpenAPI", json.load(open(sys.argv[1]))["openapi"])' gateway-rest/openapi/openapi.json

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy"
cargo clippy --workspace --all-targets -- -D warnings

step "test image and static agent"
# Built once per machine (debootstrap) and once per checkout (the agent);
# the tests find both through the same scripts.
./scripts/test-image.sh >/dev/null
./scripts/build-agent.sh >/dev/null

step "cargo test"
cargo test --workspace

step "python grpcio against talon up"
cargo build --quiet --bin talon
data=$(mktemp -d)
port=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ops=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
http=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
TALON_LOG=warn target/debug/talon up --agent-path "$(./scripts/build-agent.sh)" --http-listen "127.0.0.1:$http" --data-dir "$data" --grpc-listen "127.0.0.1:$port" --ops-listen "127.0.0.1:$ops" >"$data/up.log" 2>&1 &
up=$!
trap 'kill $up 2>/dev/null || true; rm -rf "$data"' EXIT
.venv/bin/python server/tests/python/reflection_check.py "127.0.0.1:$port" "$data/bootstrap-credentials.json"
