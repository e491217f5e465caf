// What a first visit downloads before anything shows: the script and
// stylesheets index.html loads (and the chunks the script imports
// statically), gzipped at level 9 as a server would send them. Shared by
// scripts/size.mjs (the build's budget) and bench/console/bench.mjs.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

export const gzBytes = (dist, f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;

/** { files: Set of paths below dist, gzBytes, xterm: whether xterm got in } */
export function entryBundle(dist) {
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const files = new Set([...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]));
  for (const f of [...files]) {
    if (!f.endsWith(".js")) continue;
    const src = readFileSync(join(dist, f), "utf8");
    for (const m of src.matchAll(/^import\s*(?:[^'"]*from\s*)?["']\.\/([^"']+)["']/gm)) files.add(`assets/${m[1]}`);
  }
  let total = 0;
  let xterm = false;
  for (const f of files) {
    total += gzBytes(dist, f);
    const raw = readFileSync(join(dist, f), "utf8");
    if (raw.includes("xterm-helper-textarea") || raw.includes("xterm-screen")) xterm = true;
  }
  return { files, gzBytes: total, xterm };
}
