"""Agent runs through the Python SDK, sync and async, against a live
`talon up`: events in order, workspace changes, a run followed again by
id, a named secret that reaches the agent but no event, and cancel."""

import asyncio
import os
import uuid

import httpx
import pytest

from talon_sandbox import AsyncSandbox, Sandbox

pytestmark = pytest.mark.skipif(
    not os.environ.get("TALON_API_KEY"), reason="needs a live server: TALON_URL and TALON_API_KEY"
)

SCRIPT = ('read task; echo "doing: $task"; echo "key $AGENT_KEY" >&2; '
          'echo 1 > /workspace/{d}/one.txt; sleep 0.3; echo 2 > /workspace/{d}/two.txt')


@pytest.fixture(scope="module")
def secret():
    name, value = "AGENT_KEY_" + uuid.uuid4().hex[:6].upper(), "agent-secret-" + uuid.uuid4().hex
    base, key = os.environ["TALON_URL"], os.environ["TALON_API_KEY"]
    r = httpx.put(f"{base}/v1/secrets/{name}", headers={"authorization": f"Bearer {key}"},
                  json={"value": value, "delivery": "SECRET_DELIVERY_ENV"})
    r.raise_for_status()
    return name, value


@pytest.fixture(scope="module")
def sbx():
    with Sandbox.create(memory_mib=256, timeout=600) as s:
        yield s


def test_a_run_streams_in_order_and_keeps_secrets(sbx, secret):
    name, value = secret
    d = uuid.uuid4().hex[:6]
    sbx.files.make_dir(f"/workspace/{d}")
    seen = []
    run = sbx.agent.run(["/bin/sh", "-c", SCRIPT.format(d=d).replace("AGENT_KEY", name)], "refactor\n",
                        secrets=[name], on_event=seen.append)
    assert run.exit_code == 0 and not run.timed_out and run.run_id.startswith("run_")
    kinds = [e.kind for e in run.events]
    assert kinds[0] == "started" and kinds[-1] == "completed"
    assert [e.seq for e in run.events] == list(range(1, len(run.events) + 1))
    assert seen == run.events
    assert "doing: refactor\n" in run.output and "key ***\n" in run.output
    assert [(c.path, c.change) for c in run.file_changes] == [
        (f"/workspace/{d}/one.txt", "create"), (f"/workspace/{d}/two.txt", "create")]
    assert value not in repr(run.events)
    again = sbx.agent.connect(run.run_id)
    assert again.events == run.events
    tail = sbx.agent.connect(run.run_id, after_seq=len(run.events) - 1)
    assert [e.kind for e in tail.events] == ["completed"]


def test_async_run_and_cancel(sbx):
    async def main():
        s = await AsyncSandbox.connect(sbx.sandbox_id)
        started = asyncio.Event()
        ids = []

        def note(e):
            if e.kind == "started":
                ids.append(e.run_id)
                started.set()

        task = asyncio.ensure_future(s.agent.run("sleep 60", on_event=note))
        await asyncio.wait_for(started.wait(), 20)
        await s.agent.cancel(ids[0])
        run = await asyncio.wait_for(task, 20)
        assert run.exit_code != 0 and not run.timed_out

    asyncio.run(main())
