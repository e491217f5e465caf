// The entry bundle's size (scripts/entry.mjs says what counts), and every
// chunk's. Exits 1 if over BUDGET_KIB or if xterm is in the entry.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { entryBundle, gzBytes } from "./entry.mjs";

const BUDGET_KIB = 250;
const dist = new URL("../dist/", import.meta.url).pathname;
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const entry = entryBundle(dist);

console.log("chunk                                         bytes      gzip   entry");
for (const f of readdirSync(join(dist, "assets")).map((f) => `assets/${f}`).sort()) {
  const raw = readFileSync(join(dist, f));
  console.log(`${f.padEnd(44)} ${String(raw.length).padStart(8)} ${kib(gzBytes(dist, f)).padStart(10)}   ${entry.files.has(f) ? "yes" : ""}`);
}
console.log(`\nentry bundle (gzipped): ${kib(entry.gzBytes)} of ${BUDGET_KIB} KiB`);
console.log(`xterm in the entry: ${entry.xterm ? "YES (it must not be)" : "no"}`);
if (entry.gzBytes > BUDGET_KIB * 1024 || entry.xterm) process.exit(1);
