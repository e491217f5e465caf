"""Code contexts through the Python SDK against a live `talon up`: a
Python context keeps its state, a matplotlib figure comes back as a PNG,
an error carries its traceback, interrupt stops a busy loop; JavaScript
and Bash contexts; the async client the same."""

import asyncio
import os
import subprocess
import threading
import time

import pytest

from talon_sandbox import AsyncSandbox, Sandbox
from talon_sandbox.errors import InvalidArgumentError, NotFoundError

pytestmark = pytest.mark.skipif(
    not os.environ.get("TALON_API_KEY"), reason="needs a live server: TALON_URL and TALON_API_KEY"
)


def _ipykernel() -> bool:
    ok = subprocess.run(["/usr/bin/python3", "-c", "import ipykernel, matplotlib"],
                        capture_output=True).returncode == 0
    if not ok and os.environ.get("CI"):
        raise AssertionError("CI installs python3-ipykernel and python3-matplotlib")
    return ok


def test_python_context_state_plot_error_and_interrupt():
    if not _ipykernel():
        pytest.skip("no ipykernel on this host")
    with Sandbox.create(memory_mib=1024, timeout=600) as sbx:
        ctx = sbx.code.create_context("python")
        assert ctx.language == "python" and ctx.id
        seen = []
        x = sbx.code.run("a = 6\nprint('hi')\na * 7", context=ctx, on_stdout=seen.append)
        assert (x.stdout, x.text, x.error, seen) == ("hi\n", "42", None, ["hi\n"])
        assert sbx.code.run("a + 1", context=ctx).text == "7"

        x = sbx.code.run("import matplotlib.pyplot as plt\nplt.plot([1, 2, 1])\nplt.show()", context=ctx)
        pngs = [r.png for r in x.results if "image/png" in r.data]
        assert pngs and pngs[0].startswith(b"\x89PNG"), x

        x = sbx.code.run("1 / 0", context=ctx)
        assert x.error is not None and x.error.name == "ZeroDivisionError"
        assert any("1 / 0" in line or "ZeroDivisionError" in line for line in x.error.traceback)

        # Interrupt from another thread stops a busy loop within 2 s. The
        # clock starts before the call: the run may end (and this thread
        # read it) before interrupt() has returned in the other one.
        def stop():
            time.sleep(1)
            stopped.append(time.monotonic())
            sbx.code.interrupt(ctx)

        stopped: list = []
        stopper = threading.Thread(target=stop)
        stopper.start()
        x = sbx.code.run("while True:\n    pass", context=ctx)
        took = time.monotonic() - stopped[0]
        stopper.join()
        assert x.interrupted and x.error.name == "KeyboardInterrupt" and took < 2, (x, took)
        assert sbx.code.run("a", context=ctx).text == "6"

        assert [c.id for c in sbx.code.list_contexts()] == [ctx.id]
        sbx.code.delete_context(ctx)
        with pytest.raises(NotFoundError):
            sbx.code.run("1", context=ctx)
        with pytest.raises(InvalidArgumentError):
            sbx.code.create_context("cobol")


def test_javascript_and_bash_contexts():
    with Sandbox.create(timeout=600) as sbx:
        x = sbx.code.run("const n = [1, 2, 3].map(v => v * 2); n", language="javascript")
        assert x.text == "[ 2, 4, 6 ]" and x.results[0].json == [2, 4, 6], x
        assert sbx.code.run("n.length", language="javascript").text == "3"
        x = sbx.code.run("null.x", language="javascript")
        assert x.error.name == "TypeError"

        sh = sbx.code.create_context("bash", cwd="/tmp")
        sbx.code.run("export GREETING=hello; cd /", context=sh)
        x = sbx.code.run("echo $GREETING from $PWD; echo oops >&2", context=sh)
        assert (x.stdout, x.stderr, x.error) == ("hello from /\n", "oops\n", None)
        assert sbx.code.run("false", context=sh).error.value == "1"


def test_async_code():
    async def main():
        async with await AsyncSandbox.create(timeout=600) as sbx:
            ctx = await sbx.code.create_context("bash")
            x = await sbx.code.run("V=1; echo $((V + 1))", context=ctx)
            assert x.stdout == "2\n"
            again = await sbx.code.restart_context(ctx)
            assert again.id == ctx.id
            x = await sbx.code.run("echo ${V:-unset}", context=ctx)
            assert x.stdout == "unset\n"
            assert len(await sbx.code.list_contexts()) == 1

    asyncio.run(main())
