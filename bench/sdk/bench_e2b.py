"""talon-bench's E2B SDK driver: the unmodified `e2b` SDK through Talon's
E2B-compatible API, Sandbox.create() and commands.run("true"), each timed
in ms. Prints {"create": [...], "exec": [...]}. E2B_API_URL,
E2B_SANDBOX_URL, E2B_API_KEY, BENCH_RUNS, BENCH_WARMUP."""

import json
import os
import time

from e2b import Sandbox

runs, warm = int(os.environ["BENCH_RUNS"]), int(os.environ["BENCH_WARMUP"])


def ms(f):
    t0 = time.perf_counter()
    r = f()
    return (time.perf_counter() - t0) * 1e3, r


out = {"create": [], "exec": []}
sbx = Sandbox.create()
try:
    for i in range(warm * 4 + runs * 2):
        t, r = ms(lambda: sbx.commands.run("true"))
        assert r.exit_code == 0, r
        if i >= warm * 4:
            out["exec"].append(t)
finally:
    sbx.kill()
# Creates last, as in bench.py.
for i in range(warm + runs):
    t, s = ms(Sandbox.create)
    s.kill()
    if i >= warm:
        out["create"].append(t)
print(json.dumps(out))
