#!/usr/bin/env python3
"""Runs the README's quickstart blocks exactly as written (those after a
`<!-- quickstart: NAME -->` marker) against the platform that TALON_URL
and TALON_API_KEY name, and checks what they print."""

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
readme = (ROOT / "README.md").read_text()
blocks = dict(re.findall(r"<!-- quickstart: (\w+) -->\n```\w*\n(.*?)```", readme, re.S))
want = {"curl", "python", "typescript", "csharp"}
if set(blocks) != want:
    sys.exit(f"README quickstart blocks: {sorted(blocks)}, want {sorted(want)}")

work = Path(tempfile.mkdtemp(prefix="talon-quickstart-"))
# `npm install ./clients/typescript`, as the README says, into a scratch project.
mod = work / "node_modules/@talon-sandbox"
mod.mkdir(parents=True)
(mod / "sdk").symlink_to(ROOT / "clients/typescript")
(work / "quickstart.mjs").write_text(blocks["typescript"])
# C#: the SDK built as its README says (Mono here), the sample compiled
# against it with mcs, run under mono.
dotnet = work / "dotnet"
subprocess.run(["bash", str(ROOT / "clients/dotnet/build.sh"), "--no-tests"], check=True,
               env={**os.environ, "DOTNET_OUT": str(dotnet)}, stdout=subprocess.DEVNULL)
(work / "Quickstart.cs").write_text(blocks["csharp"])
subprocess.run(["mcs", "-langversion:7.1", "-nologo", "-warnaserror+", "-r:System.Net.Http.dll",
                f"-r:{dotnet}/Talon.Sdk.dll", f"-out:{dotnet}/quickstart.exe", str(work / "Quickstart.cs")],
               check=True)
runs = {
    "curl": ["bash", "-euo", "pipefail", "-c", blocks["curl"]],
    "python": [str(ROOT / ".venv/bin/python"), "-c", blocks["python"]],
    "typescript": ["node", str(work / "quickstart.mjs")],
    "csharp": ["mono", str(dotnet / "quickstart.exe")],
}
failed = False
for name, cmd in runs.items():
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=work, timeout=300)
    out = p.stdout
    # Every sample prints the process's output as text (curl's decodes
    # the NDJSON events with jq).
    ok = p.returncode == 0 and "hello from a sandbox" in out
    if name in ("python", "csharp"):
        ok = ok and "kept in /workspace" in out
    print(f"{name}: {'ok' if ok else 'FAILED'}")
    if not ok:
        failed = True
        print(f"  exit {p.returncode}\n  stdout: {out[-600:]}\n  stderr: {p.stderr[-600:]}")
sys.exit(1 if failed else 0)
