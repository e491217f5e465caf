#!/usr/bin/env python3
"""The shape of the tree, checked: what DESIGN.md and docs/architecture.md
say about it stays true as features land.

- every hand-written source file is at most 700 lines (generated code,
  named by its folder or by its own "generated" header, is not counted);
- each workspace crate's normal dependencies on the workspace's crates
  are exactly the names in backticks in its row of the crate table in
  docs/architecture.md (a new edge is a decision, written there first);
- nothing under server/src/domain/ nor server/src/error.rs names
  `crate::api` (the domain never reaches up into the transport layer);
- every crate's folder has a row in the README's layout table;
- a crate whose src/ has no `unsafe` says `#![forbid(unsafe_code)]`
  (and where there is some, clippy's undocumented_unsafe_blocks, set
  for the workspace, wants a SAFETY comment on each block);
- every dependency a crate declares is named in its sources (one used
  only by generated code is listed under
  `[package.metadata.cargo-machete] ignored`, as cargo-machete reads it).

Usage: scripts/structure.py [ROOT]. Exits 1 and names each violation.
Its own tests: scripts/test_structure.py.
"""

import json
import os
import re
import subprocess
import sys

MAX_LINES = 700
SOURCE = re.compile(r"\.(rs|py|pyi|ts|tsx|mts|js|mjs|cjs|go|sh|cs|java|kt|proto|svelte|vue)$")
# Generated trees: checked by their generators' diff in CI, not by hand.
GENERATED_DIRS = (
    "clients/go/internal/api/",
    "clients/python/src/talon_sandbox/_api/",
    "clients/typescript/src/generated/",
    "clients/dotnet/src/Talon.Sdk/Generated/",
    "gateway-rest/openapi/",
)
GENERATED_MARK = re.compile(
    r"code generated .* do not edit|auto-generated|@generated|do not edit by hand",
    re.IGNORECASE,
)
API_IMPORT = re.compile(r"\bcrate::api\b")


def generated(path, text):
    if path.startswith(GENERATED_DIRS):
        return True
    head = "\n".join(text.splitlines()[:5])
    return bool(GENERATED_MARK.search(head))


def long_files(files):
    """files: {path: text}. The hand-written source files over the limit."""
    out = []
    for path, text in sorted(files.items()):
        if not SOURCE.search(path) or generated(path, text):
            continue
        n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if n > MAX_LINES:
            out.append(f"{path}: {n} lines (at most {MAX_LINES}; split it by concern)")
    return out


def api_imports(files):
    """`crate::api` in the server's domain or error.rs."""
    out = []
    for path, text in sorted(files.items()):
        if not path.endswith(".rs"):
            continue
        if not (path.startswith("server/src/domain/") or path == "server/src/error.rs"):
            continue
        for i, line in enumerate(text.splitlines(), 1):
            code = line.split("//", 1)[0]
            if API_IMPORT.search(code):
                out.append(f"{path}:{i}: names crate::api (the domain never imports the transport layer)")
    return out


def crate_table(doc):
    """{crate: (folder, {deps})} from the table under '## Crates'."""
    rows = {}
    section = doc.split("## Crates", 1)
    if len(section) < 2:
        return rows
    for line in section[1].splitlines():
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        crate = cells[0].strip("`")
        folder = cells[1].strip("`")
        deps = set(re.findall(r"`(talon[a-z0-9-]*)`", cells[2]))
        rows[crate] = (folder, deps)
    return rows


def crate_edges(metadata):
    """{crate: (folder, {deps})} from `cargo metadata --no-deps`."""
    names = {p["name"] for p in metadata["packages"]}
    root = metadata["workspace_root"]
    out = {}
    for p in metadata["packages"]:
        folder = os.path.relpath(os.path.dirname(p["manifest_path"]), root) + "/"
        deps = {d["name"] for d in p["dependencies"] if d["name"] in names and d.get("kind") is None}
        out[p["name"]] = (folder, deps)
    return out


def edge_differences(actual, table):
    out = []
    for crate, (folder, deps) in sorted(actual.items()):
        if crate not in table:
            out.append(f"{crate} ({folder}) has no row in docs/architecture.md's crate table")
            continue
        tfolder, tdeps = table[crate]
        if tfolder.rstrip("/") + "/" != folder:
            out.append(f"{crate}: the table says folder {tfolder}, it is {folder}")
        for d in sorted(deps - tdeps):
            out.append(f"{crate} -> {d}: an edge the crate table does not list")
        for d in sorted(tdeps - deps):
            out.append(f"{crate} -> {d}: listed in the crate table, but not a dependency")
    for crate in sorted(set(table) - set(actual)):
        out.append(f"{crate}: in the crate table, but not a workspace crate")
    return out


def readme_gaps(actual, readme):
    """Crate folders with no row (theirs or a parent's) in README's layout table."""
    rows = set(re.findall(r"^\| `([^`]+/)` \|", readme, re.MULTILINE))
    out = []
    for crate, (folder, _) in sorted(actual.items()):
        if not any(folder.startswith(r) for r in rows):
            out.append(f"{crate} ({folder}) has no row in README.md's layout table")
    return out


def unused_dependencies(metadata, sources):
    """sources: {crate: text of its own .rs files}. Declared, never named."""
    out = []
    for p in sorted(metadata["packages"], key=lambda p: p["name"]):
        text = sources.get(p["name"], "")
        ignored = set(((p.get("metadata") or {}).get("cargo-machete") or {}).get("ignored", []))
        for d in p["dependencies"]:
            if d["name"] in ignored or d.get("kind") == "build":
                continue
            lib = (d.get("rename") or d["name"]).replace("-", "_")
            if not re.search(r"\b" + re.escape(lib) + r"\b", text):
                kind = "dev-dependency" if d.get("kind") == "dev" else "dependency"
                out.append(f"{p['name']}: {kind} {d['name']} is never used (remove it)")
    return out


UNSAFE = re.compile(r"\bunsafe\s*(\{|fn\b|impl\b|extern\b)")


def unforbidden(roots):
    """roots: {crate: text of its src/}. Crates without unsafe that do not
    forbid it."""
    out = []
    for crate, text in sorted(roots.items()):
        code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
        if not UNSAFE.search(code) and "#![forbid(unsafe_code)]" not in text:
            out.append(f"{crate}: no unsafe in src/, so say #![forbid(unsafe_code)] at its root")
    return out


def crate_sources(root, metadata, only_src=False):
    """Each crate's own .rs files (not a crate nested in its folder)."""
    dirs = {p["name"]: os.path.dirname(p["manifest_path"]) for p in metadata["packages"]}
    out = {}
    for name, d in dirs.items():
        nested = [o for o in dirs.values() if o != d and o.startswith(d + os.sep)]
        parts = []
        for base, subdirs, files in os.walk(os.path.join(d, "src") if only_src else d):
            subdirs[:] = [s for s in subdirs if s != "target" and not s.startswith(".")
                          and os.path.join(base, s) not in nested]
            for f in files:
                if f.endswith(".rs"):
                    with open(os.path.join(base, f), encoding="utf-8", errors="replace") as fh:
                        parts.append(fh.read())
        out[name] = "\n".join(parts)
    return out


def check(root):
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True
    ).stdout.decode().split("\0")
    files = {}
    for path in filter(None, tracked):
        full = os.path.join(root, path)
        if SOURCE.search(path) and os.path.isfile(full):
            with open(full, encoding="utf-8", errors="replace") as f:
                files[path] = f.read()
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps", "--offline"],
            cwd=root, check=True, capture_output=True,
        ).stdout
    )
    actual = crate_edges(metadata)
    with open(os.path.join(root, "docs/architecture.md")) as f:
        table = crate_table(f.read())
    with open(os.path.join(root, "README.md")) as f:
        readme = f.read()
    return (
        long_files(files)
        + api_imports(files)
        + edge_differences(actual, table)
        + readme_gaps(actual, readme)
        + unused_dependencies(metadata, crate_sources(root, metadata))
        + unforbidden(crate_sources(root, metadata, only_src=True))
    )


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(os.path.abspath(root))
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("structure: files within 700 lines, crate edges as documented, domain free of api")


if __name__ == "__main__":
    main()
