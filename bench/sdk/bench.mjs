// talon-bench's TypeScript SDK driver (the built SDK in
// clients/typescript/dist): Sandbox.create(), commands.run(["true"]) and a
// write+read of BENCH_FILE_MIB MiB, each timed in ms. Prints {"create":
// [...], "exec": [...], "file": [...]}. TALON_URL, TALON_API_KEY,
// BENCH_RUNS, BENCH_WARMUP, BENCH_FILE_RUNS.
import { Sandbox } from "../../clients/typescript/dist/src/index.js";

const env = (k) => Number(process.env[k]);
const [runs, warm, mib, fileRuns] = [env("BENCH_RUNS"), env("BENCH_WARMUP"), env("BENCH_FILE_MIB"), env("BENCH_FILE_RUNS")];
async function ms(f) {
  const t0 = performance.now();
  const r = await f();
  return [performance.now() - t0, r];
}

const out = { create: [], exec: [], file: [] };
const sbx = await Sandbox.create();
try {
  for (let i = 0; i < warm * 4 + runs * 2; i++) {
    const [t, r] = await ms(() => sbx.commands.run(["true"]));
    if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}`);
    if (i >= warm * 4) out.exec.push(t);
  }
  const data = new Uint8Array(mib << 20);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + Math.floor(i / 4093)) & 0xff;
  for (let i = 0; i < fileRuns + 1; i++) {
    const [t, back] = await ms(async () => {
      await sbx.files.write("/tmp/sdk.bin", data);
      return sbx.files.read("/tmp/sdk.bin", { format: "bytes" });
    });
    if (back.length !== data.length) throw new Error("the file came back different");
    if (i > 0) out.file.push(t);
  }
} finally {
  await sbx.kill();
}
// Creates last: each kill leaves teardown work on the worker, which would
// run beside the exec figures.
for (let i = 0; i < warm + runs; i++) {
  const [t, s] = await ms(() => Sandbox.create());
  await s.kill();
  if (i >= warm) out.create.push(t);
}
console.log(JSON.stringify(out));
