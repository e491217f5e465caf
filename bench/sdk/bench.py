"""talon-bench's Python SDK driver: Sandbox.create(), commands.run(["true"])
and a write+read of BENCH_FILE_MIB MiB, through the SDK as a user calls
it (REST), each timed in ms. Prints {"create": [...], "exec": [...],
"file": [...], "exec_login": [...]} (exec_login: E2B's
`/bin/bash -l -c true`). TALON_URL, TALON_API_KEY, BENCH_RUNS, BENCH_WARMUP."""

import json
import os
import time

from talon_sandbox import Sandbox

runs, warm = int(os.environ["BENCH_RUNS"]), int(os.environ["BENCH_WARMUP"])
mib, file_runs = int(os.environ["BENCH_FILE_MIB"]), int(os.environ["BENCH_FILE_RUNS"])


def ms(f):
    t0 = time.perf_counter()
    r = f()
    return (time.perf_counter() - t0) * 1e3, r


out = {"create": [], "exec": [], "exec_login": [], "file": []}
sbx = Sandbox.create()
try:
    for i in range(warm * 4 + runs * 2):
        t, r = ms(lambda: sbx.commands.run(["true"]))
        assert r.exit_code == 0, r
        if i >= warm * 4:
            out["exec"].append(t)
    # What E2B's SDK runs for commands.run("true"): the baseline of the
    # E2B figure (bench_e2b.py), so that ratio is not bash's.
    for i in range(warm * 4 + runs * 2):
        t, r = ms(lambda: sbx.commands.run(["/bin/bash", "-l", "-c", "true"]))
        assert r.exit_code == 0, r
        if i >= warm * 4:
            out["exec_login"].append(t)
    data = bytes((i * 7 + i // 4093) & 0xFF for i in range(mib << 20))
    for i in range(file_runs + 1):
        t, back = ms(lambda: (sbx.files.write("/tmp/sdk.bin", data), sbx.files.read("/tmp/sdk.bin", format="bytes"))[1])
        assert back == data
        if i > 0:
            out["file"].append(t)
finally:
    sbx.kill()
# Creates last: each kill leaves teardown work on the worker, which would
# run beside the exec figures.
for i in range(warm + runs):
    t, s = ms(Sandbox.create)
    s.kill()
    if i >= warm:
        out["create"].append(t)
print(json.dumps(out))
