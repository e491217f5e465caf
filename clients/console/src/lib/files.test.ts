import { describe, expect, it } from "vitest";
import {
  MAX_VIEW_BYTES,
  type FileEntry,
  baseName,
  decodeText,
  humanBytes,
  joinPath,
  modeString,
  nameError,
  notViewable,
  parentOf,
  percent,
  sortEntries,
  targetDir,
  visibleRows,
} from "./files";

const dir = (path: string): FileEntry => ({ path, name: baseName(path), type: "FILE_TYPE_DIRECTORY" });
const file = (path: string, size = 10): FileEntry => ({ path, name: baseName(path), type: "FILE_TYPE_FILE", size: String(size) });

describe("paths", () => {
  it("joins, splits and names", () => {
    expect(joinPath("/workspace", "a.txt")).toBe("/workspace/a.txt");
    expect(joinPath("/workspace/", "a.txt")).toBe("/workspace/a.txt");
    expect(parentOf("/workspace/sub/a.txt")).toBe("/workspace/sub");
    expect(parentOf("/workspace")).toBe("/");
    expect(parentOf("/workspace/sub/")).toBe("/workspace");
    expect(baseName("/workspace/sub/a.txt")).toBe("a.txt");
    expect(baseName("/workspace/sub/")).toBe("sub");
  });

  it("refuses names that are no single component", () => {
    expect(nameError("")).toBe("Enter a name.");
    expect(nameError("..")).toMatch(/cannot be/);
    expect(nameError("a/b")).toMatch(/\//);
    expect(nameError("a\0")).toMatch(/NUL/);
    expect(nameError("é".repeat(128))).toMatch(/255 bytes/);
    expect(nameError("notes (1).md")).toBeUndefined();
  });
});

describe("the tree", () => {
  it("sorts directories first, then by name", () => {
    const sorted = sortEntries([file("/w/b"), dir("/w/z"), file("/w/a"), dir("/w/c")]);
    expect(sorted.map((e) => e.name)).toEqual(["c", "z", "a", "b"]);
  });

  it("shows the entries of open directories that were listed, depth first", () => {
    const listed = new Map<string, FileEntry[]>([
      ["/w", [dir("/w/src"), dir("/w/docs"), file("/w/README")]],
      ["/w/src", [dir("/w/src/lib"), file("/w/src/main.ts")]],
      ["/w/docs", [file("/w/docs/a.md")]],
    ]);
    const rows = visibleRows("/w", listed, new Set(["/w/src", "/w/src/lib"]));
    expect(rows.map((r) => `${r.depth}:${r.path}`)).toEqual([
      "1:/w/src",
      // src/lib is open but not listed yet: nothing under it.
      "2:/w/src/lib",
      "2:/w/src/main.ts",
      "1:/w/docs",
      "1:/w/README",
    ]);
    expect(visibleRows("/w", new Map(), new Set())).toEqual([]);
  });

  it("puts new things in the selected directory, or beside the selected file", () => {
    expect(targetDir(null, "/w")).toBe("/w");
    expect(targetDir(dir("/w/src"), "/w")).toBe("/w/src");
    expect(targetDir(file("/w/src/a.ts"), "/w")).toBe("/w/src");
  });
});

describe("the viewer", () => {
  it("says why a file is not shown before reading it", () => {
    expect(notViewable(file("/w/a", 5))).toBeUndefined();
    expect(notViewable(file("/w/a", MAX_VIEW_BYTES))).toBeUndefined();
    expect(notViewable(file("/w/a", MAX_VIEW_BYTES + 1))).toMatch(/Too large to show here \(1 MiB; .*up to 1 MiB\)/);
    expect(notViewable({ type: "FILE_TYPE_SYMLINK", symlinkTarget: "/etc" })).toMatch(/link to \/etc/);
    expect(notViewable(dir("/w/d"))).toMatch(/Not a regular file/);
  });

  it("decodes UTF-8 text and refuses binary", () => {
    expect(decodeText(new TextEncoder().encode("héllo\n"))).toBe("héllo\n");
    expect(decodeText(new Uint8Array([0x68, 0x00, 0x69]))).toBeNull();
    expect(decodeText(new Uint8Array([0xff, 0xfe, 0x41]))).toBeNull();
    expect(decodeText(new Uint8Array())).toBe("");
  });

  it("says sizes, modes and progress", () => {
    expect(humanBytes(0)).toBe("0 B");
    expect(humanBytes(1023)).toBe("1023 B");
    expect(humanBytes(1536)).toBe("1.5 KiB");
    expect(humanBytes(5 * 1024 * 1024)).toBe("5 MiB");
    expect(humanBytes(300 * 1024 * 1024)).toBe("300 MiB");
    expect(modeString(0o755)).toBe("rwxr-xr-x");
    expect(modeString(0o640)).toBe("rw-r-----");
    expect(percent(50, 200)).toBe(25);
    expect(percent(5, 0)).toBe(0);
    expect(percent(300, 200)).toBe(100);
  });
});
