#!/usr/bin/env bash
# Builds the .NET conformance adapter: the SDK (clients/dotnet/build.sh
# --no-tests, into bin/sdk here, so that it never shares clients/dotnet/bin
# with another build), then Adapter.cs and the rest of this directory's .cs
# into bin/adapter.exe with the SDK's dlls beside it. Run as
#
#   mono conformance/adapters/dotnet/bin/adapter.exe CASES.json RESULTS.json
#
# Same compiler settings as the SDK: mcs, C# 7.1, warnings as errors.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
NEWTONSOFT=${NEWTONSOFT_JSON_DLL:-/usr/lib/cli/Newtonsoft.Json-5.0/Newtonsoft.Json.dll}
OUT="$HERE/bin"
mkdir -p "$OUT"
DOTNET_OUT="$OUT/sdk" NEWTONSOFT_JSON_DLL="$NEWTONSOFT" bash "$ROOT/clients/dotnet/build.sh" --no-tests
# Beside adapter.exe, where mono looks for them (the .mdb: line numbers in traces).
cp "$OUT"/sdk/Talon.Sdk.dll "$OUT"/sdk/Talon.Sdk.dll.mdb "$OUT"/sdk/Newtonsoft.Json.dll "$OUT"/
echo "mcs: adapter.exe from $(cd "$HERE" && ls *.cs | tr '\n' ' ')"
mcs -langversion:7.1 -warnaserror+ -debug -nologo -target:exe -out:"$OUT"/adapter.exe \
  -r:System.dll -r:System.Core.dll -r:System.Net.Http.dll \
  -r:"$OUT"/Talon.Sdk.dll -r:"$OUT"/Newtonsoft.Json.dll "$HERE"/*.cs
