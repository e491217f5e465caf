#!/usr/bin/env bash
# Checks deploy/: the Helm chart with `helm lint` and `helm template` (Helm
# v4, installed with `go install` into .tools/bin when missing; Go's build
# cache makes later installs quick), its rendered objects read back, and
# the compose file parsed. No cluster or container engine is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
HELM_VERSION=v4.3.2
helm=.tools/bin/helm
# A `go install` build carries no version string of its own: a stamp says
# which one is there.
if [ ! -x "$helm" ] || [ "$(cat .tools/bin/helm.version 2>/dev/null)" != "$HELM_VERSION" ]; then
  mkdir -p .tools/bin
  GOBIN=$PWD/.tools/bin GOFLAGS=-mod=mod go install "helm.sh/helm/v4/cmd/helm@${HELM_VERSION}"
  echo "$HELM_VERSION" > .tools/bin/helm.version
fi
echo "helm $HELM_VERSION"
chart=deploy/helm/talon
py=${PYTHON:-.venv/bin/python}
"$helm" lint --strict "$chart" --set postgres.url=postgres://u:p@db:5432/talon
# Refused without a database (fail closed, with a clear message).
if "$helm" template t "$chart" >/dev/null 2>/tmp/helm-err; then
  echo "the chart rendered without postgres.url" >&2; exit 1
fi
grep -q "postgres.url" /tmp/helm-err
out=$(mktemp -d)
"$helm" template t "$chart" --set postgres.url=postgres://u:p@db:5432/talon > "$out/default.yaml"
"$helm" template t "$chart" --set postgres.existingSecret=pg --set keys.existingSecret=k \
  --set worker.sharedWorkspaces.hostPath=/mnt/talon --set serviceMonitor.enabled=true \
  --set server.replicas=3 > "$out/shared.yaml"
"$py" - "$out" <<'PY'
import sys, yaml
out = sys.argv[1]
def docs(name):
    return [d for d in yaml.safe_load_all(open(f"{out}/{name}.yaml")) if d]
def kinds(ds):
    return sorted(f"{d['kind']}/{d['metadata']['name']}" for d in ds)
d = docs("default")
assert kinds(d) == ["DaemonSet/t-talon-worker", "Deployment/t-talon-gateway", "Deployment/t-talon-server",
                    "Secret/t-talon-keys", "Secret/t-talon-postgres", "Service/t-talon-gateway",
                    "Service/t-talon-server"], kinds(d)
by = {f"{x['kind']}/{x['metadata']['name']}": x for x in d}
srv = by["Deployment/t-talon-server"]
assert srv["spec"]["replicas"] == 2
args = srv["spec"]["template"]["spec"]["containers"][0]["args"]
assert args[0] == "server" and "--grpc-listen=0.0.0.0:7070" in args, args
env = {e["name"]: e for e in srv["spec"]["template"]["spec"]["containers"][0]["env"]}
assert env["TALON_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "t-talon-postgres"
assert env["TALON_ADVERTISE_URL"]["value"] == "http://$(POD_IP):7070"
keys = by["Secret/t-talon-keys"]["data"]
import base64
assert set(keys) == {"jwt.key", "worker.token", "preview.key", "secrets.key"}
assert base64.b64decode(keys["worker.token"]).startswith(b"wkr_")
sk = base64.b64decode(keys["secrets.key"]).decode()
assert len(sk) == 64 and all(c in "0123456789abcdef" for c in sk), "secrets.key is 32 bytes in hex"
w = by["DaemonSet/t-talon-worker"]["spec"]["template"]["spec"]
c = w["containers"][0]
assert w["hostNetwork"] and c["securityContext"]["privileged"]
assert "--server-url=http://t-talon-server:7070" in c["args"]
assert "--data-listen=$(NODE_IP):7071" in c["args"]
assert not any(a.startswith("--shared-workspaces") for a in c["args"])
s = docs("shared")
by = {f"{x['kind']}/{x['metadata']['name']}": x for x in s}
assert "Secret/t-talon-keys" not in by and "Secret/t-talon-postgres" not in by
assert by["Deployment/t-talon-server"]["spec"]["replicas"] == 3
c = by["DaemonSet/t-talon-worker"]["spec"]["template"]["spec"]["containers"][0]
assert "--shared-workspaces=/var/lib/talon-shared" in c["args"]
assert by["ServiceMonitor/t-talon-server"]["spec"]["endpoints"][0]["port"] == "ops"
compose = yaml.safe_load(open("deploy/compose/compose.yaml"))
svc = compose["services"]
assert {"postgres", "server-a", "server-b", "worker-1", "worker-2", "worker-3", "gateway"} <= set(svc)
for w in ("worker-1", "worker-2", "worker-3"):
    assert svc[w]["privileged"] and "--shared-workspaces" in svc[w]["entrypoint"][2]
print("chart: default and shared renders as expected; compose: 2 servers, 3 workers")
PY
rm -rf "$out"
