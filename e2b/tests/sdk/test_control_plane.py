"""The unmodified `e2b` Python SDK (pinned in scripts/test.sh) against
Talon's E2B-compatible control plane, configured only by E2B_API_KEY and
E2B_API_URL (a Talon API key and `talon up`'s E2B listener). Calls that
need the sandbox data plane (envd) are not here yet."""

import os
import uuid

import pytest

e2b = pytest.importorskip("e2b")
from e2b import Sandbox, SandboxQuery, SandboxState  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (os.environ.get("E2B_API_URL") and os.environ.get("E2B_API_KEY")),
    reason="needs Talon's E2B API: E2B_API_URL and E2B_API_KEY",
)


@pytest.fixture
def run():
    return uuid.uuid4().hex[:8]


def test_create_info_timeout_and_kill(run):
    sbx = Sandbox.create(timeout=120, metadata={"run": run}, envs={"GREETING": "hi"})
    try:
        assert sbx.sandbox_id.isalnum() and sbx.sandbox_id.islower()
        info = sbx.get_info()
        assert info.metadata == {"run": run}
        assert info.state == SandboxState.RUNNING
        assert info.template_id == "base"
        before = info.end_at
        sbx.set_timeout(600)
        assert Sandbox.get_info(sbx.sandbox_id).end_at > before
        m = sbx.get_metrics()
        assert len(m) == 1 and m[0].mem_total > 0 and m[0].cpu_count >= 1
    finally:
        assert Sandbox.kill(sbx.sandbox_id) is True
    assert Sandbox.kill(sbx.sandbox_id) is False
    with pytest.raises(e2b.NotFoundException):
        Sandbox.get_info(sbx.sandbox_id)


def test_list_filters_by_metadata_and_state_and_pages(run):
    made = [Sandbox.create(timeout=120, metadata={"run": run, "i": str(i)}) for i in range(3)]
    try:
        made[0].pause()
        p = Sandbox.list(query=SandboxQuery(metadata={"run": run}), limit=2)
        seen = []
        while p.has_next:
            seen += [s.sandbox_id for s in p.next_items()]
        assert sorted(seen) == sorted(s.sandbox_id for s in made)
        paused = Sandbox.list(query=SandboxQuery(metadata={"run": run}, state=[SandboxState.PAUSED])).next_items()
        assert [s.sandbox_id for s in paused] == [made[0].sandbox_id]
        one = Sandbox.list(query=SandboxQuery(metadata={"run": run, "i": "2"})).next_items()
        assert [s.sandbox_id for s in one] == [made[2].sandbox_id]
    finally:
        for s in made:
            s.kill()


def test_pause_then_connect_resumes(run):
    sbx = Sandbox.create(timeout=120, metadata={"run": run})
    try:
        assert sbx.pause() is True
        assert Sandbox.get_info(sbx.sandbox_id).state == SandboxState.PAUSED
        again = Sandbox.connect(sbx.sandbox_id, timeout=300)
        assert again.sandbox_id == sbx.sandbox_id
        assert Sandbox.get_info(sbx.sandbox_id).state == SandboxState.RUNNING
        # Connecting to a running sandbox only ever extends its timeout.
        Sandbox.connect(sbx.sandbox_id, timeout=10)
        assert Sandbox.get_info(sbx.sandbox_id).state == SandboxState.RUNNING
    finally:
        sbx.kill()


def test_another_tenants_key_sees_nothing(run):
    other = os.environ.get("E2B_ALT_API_KEY")
    if not other:
        pytest.skip("needs E2B_ALT_API_KEY, a key of another tenant")
    sbx = Sandbox.create(timeout=120, metadata={"run": run})
    try:
        with pytest.raises(e2b.NotFoundException):
            Sandbox.get_info(sbx.sandbox_id, api_key=other)
        assert Sandbox.kill(sbx.sandbox_id, api_key=other) is False
        assert Sandbox.list(query=SandboxQuery(metadata={"run": run}), api_key=other).next_items() == []
    finally:
        sbx.kill()
