#!/usr/bin/env bash
# Builds the .NET SDK with Mono and runs its tests, on Debian's packages:
#
#   apt-get install -y mono-devel libnewtonsoft-json-cil-dev nunit-console
#
# bin/Talon.Sdk.dll is src/Talon.Sdk/**/*.cs (the hand-written layer and the
# generated one, Generated/) compiled by mcs with warnings as errors against
# the framework and Json.NET only; bin/Talon.Sdk.Tests.dll is tests/*.cs,
# run by nunit-console. Live tests need TALON_URL (and TALON_API_KEY) and are
# ignored without it. A real .NET SDK builds src/Talon.Sdk/Talon.Sdk.csproj
# instead (see README.md).
#
# -langversion:7.1: the generated code uses `default` literals (C# 7.1),
# which mcs 6.8 has; its default is 7.0. The .csproj builds as C# 7.3, the
# netstandard2.0 default.
#
# NEWTONSOFT_JSON_DLL and NUNIT_FRAMEWORK_DLL override where Debian puts them;
# DOTNET_OUT where the outputs go (default bin/, so that two builds at once
# need not share one). --no-tests builds the library only (what the
# conformance adapter and the bench driver link against).
set -euo pipefail
cd "$(dirname "$0")"
NEWTONSOFT=${NEWTONSOFT_JSON_DLL:-/usr/lib/cli/Newtonsoft.Json-5.0/Newtonsoft.Json.dll}
NUNIT=${NUNIT_FRAMEWORK_DLL:-/usr/lib/cli/nunit.framework-2.6.3/nunit.framework.dll}
TESTS=1
[ "${1:-}" = --no-tests ] && TESTS=0
need_tools=(mcs mono)
need_files=("$NEWTONSOFT")
[ "$TESTS" = 1 ] && need_tools+=(nunit-console) && need_files+=("$NUNIT")
for tool in "${need_tools[@]}"; do
  command -v "$tool" >/dev/null || { echo "build.sh: no $tool; apt-get install -y mono-devel libnewtonsoft-json-cil-dev nunit-console" >&2; exit 1; }
done
for f in "${need_files[@]}"; do
  [ -f "$f" ] || { echo "build.sh: no $f" >&2; exit 1; }
done

OUT=${DOTNET_OUT:-bin}
rm -rf "$OUT"
mkdir -p "$OUT"
MCS=(mcs -langversion:7.1 -warnaserror+ -debug -nologo -target:library -r:System.dll -r:System.Core.dll -r:System.Net.Http.dll -r:System.Runtime.Serialization.dll)
# A real .NET build leaves obj/ and bin/ under src/; their .cs are not ours.
find src/Talon.Sdk -name '*.cs' -not -path '*/obj/*' -not -path '*/bin/*' | LC_ALL=C sort >"$OUT"/sdk.sources
echo "mcs: Talon.Sdk.dll from $(wc -l <"$OUT"/sdk.sources) files"
"${MCS[@]}" -out:"$OUT"/Talon.Sdk.dll -r:"$NEWTONSOFT" @"$OUT"/sdk.sources

[ "$TESTS" = 0 ] && { cp "$NEWTONSOFT" "$OUT"/; exit 0; }

find tests -name '*.cs' -not -path '*/obj/*' -not -path '*/bin/*' | LC_ALL=C sort >"$OUT"/tests.sources
echo "mcs: Talon.Sdk.Tests.dll from $(wc -l <"$OUT"/tests.sources) files"
"${MCS[@]}" -out:"$OUT"/Talon.Sdk.Tests.dll -r:"$OUT"/Talon.Sdk.dll -r:"$NEWTONSOFT" -r:"$NUNIT" @"$OUT"/tests.sources
cp "$NEWTONSOFT" "$NUNIT" "$OUT"/

# nunit-console's exit code is the number of failures (and errors).
nunit-console -nologo -noshadow -labels "$OUT"/Talon.Sdk.Tests.dll -xml="$OUT"/TestResult.xml
