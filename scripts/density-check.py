"""100 sandboxes with default resources on one `talon up` (issue: capacity
defaults that fit agents). Their limits add up to far more cpu and memory
than this host has; placement counts what they use, so all of them run.
Each answers a command; then all are deleted. Needs TALON_URL and
TALON_API_KEY (the platform owner's key, as the README's).
"""

import json
import os
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from talon_sandbox import Sandbox

N = int(os.environ.get("TALON_DENSITY_N", "100"))


def workers():
    req = urllib.request.Request(os.environ["TALON_URL"] + "/v1/admin/workers")
    req.add_header("authorization", "Bearer " + os.environ["TALON_API_KEY"])
    return json.load(urllib.request.urlopen(req))["workers"]


def make(i):
    sbx = Sandbox.create(wait_timeout=300, request_timeout=320)
    r = sbx.commands.run(f"echo {i}")
    assert r.stdout.strip() == str(i), r
    return sbx


t0 = time.monotonic()
with ThreadPoolExecutor(8) as pool:
    made = list(pool.map(make, range(N)))
took = time.monotonic() - t0
try:
    assert len({s.sandbox_id for s in made}) == N
    info = made[0].info().raw
    res = info["resources"]
    # The worker that holds them: the list may also hold others (a worker
    # another suite started and stopped stays listed, LOST).
    hosts = {s.info().raw["workerId"] for s in made}
    assert hosts == {info["workerId"]}, hosts
    w = next(w for w in workers() if w["workerId"] == info["workerId"])
    cap, held = w["capacity"], w["allocated"]
    # Default resources, and their limits more than the host has: by
    # limits, placement would have refused long before N.
    assert int(held["sandboxes"]) >= N, w
    assert int(held["cpuMillis"]) > int(cap["cpuMillis"]) or int(held["memoryMib"]) > int(cap["memoryMib"]), w
    print(f"{N} sandboxes of {res['cpuMillis']} cpu millis and {res['memoryMib']} MiB each "
          f"running in {took:.0f} s; the worker offers {cap['cpuMillis']} cpu millis and "
          f"{cap['memoryMib']} MiB, its sandboxes' limits add up to {held['cpuMillis']} and {held['memoryMib']}")
finally:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda s: s.kill(), made))
