#!/usr/bin/env bash
# Builds the .NET SDK (clients/dotnet/build.sh --no-tests) and this driver
# with mcs, then runs it under mono; what talon-bench calls for its .NET
# rows. The build is not timed. BENCH_DOTNET_OUT moves the outputs
# (default: the gitignored bench/sdk/dotnet/bin/).
set -euo pipefail
cd "$(dirname "$0")"
OUT=${BENCH_DOTNET_OUT:-$PWD/bin}
DOTNET_OUT=$OUT bash ../../../clients/dotnet/build.sh --no-tests >&2
mcs -langversion:7.1 -warnaserror+ -nologo -optimize+ -out:"$OUT/bench.exe" \
  -r:System.Net.Http.dll -r:"$OUT/Talon.Sdk.dll" Bench.cs >&2
exec mono "$OUT/bench.exe"
