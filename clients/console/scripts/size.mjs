// The entry bundle's size: the script and stylesheets index.html loads
// first (and the chunks they import statically), gzipped at level 9 as a
// server would send them. Exits 1 if over BUDGET_KIB or if xterm is in it.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";

const BUDGET_KIB = 250;
const dist = new URL("../dist/", import.meta.url).pathname;
const html = readFileSync(join(dist, "index.html"), "utf8");
const refs = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
const gz = (f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;

// The static imports of the entry script are part of the first load too.
const entry = new Set(refs);
for (const f of [...entry]) {
  if (!f.endsWith(".js")) continue;
  const src = readFileSync(join(dist, f), "utf8");
  for (const m of src.matchAll(/^import\s*(?:[^'"]*from\s*)?["']\.\/([^"']+)["']/gm)) entry.add(`assets/${m[1]}`);
}

const all = readdirSync(join(dist, "assets")).map((f) => `assets/${f}`).sort();
let total = 0;
let xtermInEntry = false;
console.log("chunk                                         bytes      gzip   entry");
for (const f of all) {
  const raw = readFileSync(join(dist, f));
  const isEntry = entry.has(f);
  const g = gz(f);
  if (isEntry) {
    total += g;
    if (raw.includes("xterm-helper-textarea") || raw.includes("xterm-screen")) xtermInEntry = true;
  }
  console.log(`${f.padEnd(44)} ${String(raw.length).padStart(8)} ${kib(g).padStart(10)}   ${isEntry ? "yes" : ""}`);
}
console.log(`\nentry bundle (gzipped): ${kib(total)} of ${BUDGET_KIB} KiB`);
console.log(`xterm in the entry: ${xtermInEntry ? "YES (it must not be)" : "no"}`);
if (total > BUDGET_KIB * 1024 || xtermInEntry) process.exit(1);
