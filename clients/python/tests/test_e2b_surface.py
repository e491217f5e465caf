"""The surface agent builders know from E2B's SDK, sync and async, against
a live `talon up` (TALON_URL and TALON_API_KEY; scripts/test.sh starts one):
metadata and idempotent creates, connect resuming a paused sandbox, list
filters, info, metrics, kill by id, command errors and disconnect, files
as a user, write_files, streaming reads, watch_dir with polling, signed
file URLs, PTY by pid and get_host."""

import asyncio
import os
import time
import uuid

import httpx
import pytest

from talon_sandbox import AsyncSandbox, Sandbox, WriteEntry, errors

pytestmark = pytest.mark.skipif(
    not os.environ.get("TALON_API_KEY"), reason="needs a live server: TALON_URL and TALON_API_KEY"
)


@pytest.fixture(scope="module")
def sbx():
    run = uuid.uuid4().hex[:8]
    with Sandbox.create(metadata={"suite": "e2b", "run": run}, memory_mib=256, timeout=600) as s:
        yield s


def test_create_takes_metadata_and_an_idempotency_key(sbx):
    info = sbx.get_info()
    assert info.metadata["suite"] == "e2b" and info.template_id == "host"
    assert info.started_at and info.end_at > info.started_at
    key = "py-" + uuid.uuid4().hex
    a = Sandbox.create(idempotency_key=key, memory_mib=128, on_timeout="kill", allow_internet_access=False,
                       idle_timeout=90, auto_resume=True)
    try:
        b = Sandbox.create(idempotency_key=key, memory_mib=128, on_timeout="kill", allow_internet_access=False,
                           idle_timeout=90, auto_resume=True)
        assert a.sandbox_id == b.sandbox_id
        # The key with another request is refused, never answered with a's sandbox.
        with pytest.raises(errors.AlreadyExistsError):
            Sandbox.create(idempotency_key=key, memory_mib=256)
        raw = a.get_info().raw
        pol = raw["networkPolicy"]
        assert pol["mode"] == "EGRESS_MODE_SEALED" and raw["timeoutAction"] == "TIMEOUT_ACTION_DELETE"
        assert (raw["idleTimeout"], raw["autoResume"]) == ("90s", True)
    finally:
        a.kill()
    c = Sandbox.create(memory_mib=128, network={"allow_out": ["1.1.1.1", "pypi.org"], "deny_out": ["0.0.0.0/0"]})
    try:
        pol = c.get_info().raw["networkPolicy"]
        assert (pol["allowCidrs"], pol["allowDomains"]) == (["1.1.1.1/32"], ["pypi.org"])
    finally:
        c.kill()
    with pytest.raises(errors.InvalidArgumentError):
        Sandbox.create(network={"deny_out": ["8.8.8.8"]})
    with pytest.raises(errors.InvalidArgumentError):
        Sandbox.create(on_timeout="explode")
    with pytest.raises(errors.InvalidArgumentError):
        Sandbox.create(idle_timeout=1)  # under the server's minimum (10 s)


def test_list_filters_by_metadata_and_state_and_pages(sbx):
    run = sbx.get_info().metadata["run"]
    found, _ = Sandbox.list(metadata={"run": run})
    assert [i.sandbox_id for i in found] == [sbx.sandbox_id]
    assert Sandbox.list(metadata={"run": run}, state=["paused"])[0] == []
    assert [i.sandbox_id for i in Sandbox.list(metadata={"run": run}, state="running")[0]] == [sbx.sandbox_id]
    with pytest.raises(errors.InvalidArgumentError):
        Sandbox.list(state=["sleeping"])
    extra = [Sandbox.create(metadata={"page": run}, memory_mib=64, wait=False) for _ in range(3)]
    try:
        seen, token, pages = [], "", 0
        while True:
            page, token = Sandbox.list(metadata={"page": run}, limit=2, next_token=token)
            seen += [i.sandbox_id for i in page]
            pages += 1
            if not token:
                break
        assert sorted(seen) == sorted(s.sandbox_id for s in extra) and pages == 2
    finally:
        for s in extra:
            Sandbox.kill(s.sandbox_id)


def test_connect_resumes_a_paused_sandbox_and_refuses_a_deleted_one():
    s = Sandbox.create(memory_mib=128)
    s.pause()
    assert Sandbox.get_info(s.sandbox_id).state == "paused", "get_info by id does not resume"
    again = Sandbox.connect(s.sandbox_id, timeout=120)
    assert again.is_running()
    assert again.commands.run("echo back").stdout == "back\n"
    assert Sandbox.kill(s.sandbox_id) is True
    with pytest.raises(errors.NotFoundError):
        Sandbox.connect(s.sandbox_id)
    assert Sandbox.kill("sbx_" + "a" * 26) is False


def test_set_timeout_and_metrics(sbx):
    before = sbx.get_info().end_at
    sbx.set_timeout(900)
    assert sbx.get_info().end_at > before
    m = sbx.get_metrics()[0]
    assert m.cpu_count >= 1 and 0 <= m.cpu_used_pct <= 100
    assert 0 < m.mem_used < m.mem_total == 256 << 20
    assert 0 < m.disk_used < m.disk_total


def test_commands_raise_and_disconnect(sbx):
    with pytest.raises(errors.CommandExitError) as e:
        sbx.commands.run("echo partial; exit 7")
    assert (e.value.exit_code, e.value.stdout) == (7, "partial\n")
    with pytest.raises(errors.CommandTimeoutError):
        sbx.commands.run("sleep 10", timeout=0.5)
    assert sbx.commands.run("sleep 1.2; echo slow", timeout=0).stdout == "slow\n"
    h = sbx.commands.run("for i in 1 2 3 4; do echo $i; sleep 0.3; done", background=True)
    time.sleep(0.4)
    h.disconnect()
    with pytest.raises(errors.TalonError):
        h.wait()
    assert sbx.commands.connect(h.pid).wait(timeout=30).stdout == "1\n2\n3\n4\n"
    r = sbx.commands.run("id -un; pwd", user="user", cwd="/home/user")
    assert r.stdout == "user\n/home/user\n"


def test_files_as_a_user_write_files_and_streams(sbx):
    infos = sbx.files.write_files([WriteEntry("batch/a.txt", "a"), {"path": "batch/b.bin", "data": b"\0\1"}])
    assert [i.size for i in infos] == [1, 2]
    big = os.urandom(3 << 20)
    sbx.files.write("batch/big.bin", big)
    chunks = list(sbx.files.read("batch/big.bin", format="stream"))
    assert len(chunks) > 1 and b"".join(chunks) == big
    sbx.files.write("/home/user/mine.txt", "mine", user="user")
    assert sbx.commands.run("stat -c %U /home/user/mine.txt").stdout == "user\n"
    assert sbx.files.get_info("/home/user/mine.txt", user="user").size == 4
    sbx.files.write("secret.txt", "s", mode=0o600)
    with pytest.raises(errors.PermissionDeniedError):
        sbx.files.read("secret.txt", user="user")
    with pytest.raises(errors.InvalidArgumentError):
        sbx.files.read("secret.txt", user="nobody-here")
    sbx.files.make_dir("/home/user/d", user="user")
    sbx.files.rename("/home/user/d", "/home/user/e", user="user")
    assert [f.name for f in sbx.files.list("/home/user/e", user="user")] == []
    sbx.files.remove("/home/user/e", user="user")
    assert not sbx.files.exists("/home/user/e", user="user")


def test_watch_dir_polls_new_events(sbx):
    sbx.files.make_dir("polled")
    w = sbx.files.watch_dir("polled")
    try:
        sbx.files.write("polled/x.txt", "x")
        events = []
        for _ in range(50):
            events += w.get_new_events()
            if any(e.path.endswith("/x.txt") for e in events):
                break
            time.sleep(0.1)
        assert any(e.path.endswith("/x.txt") and e.type == "write" for e in events), events
        assert w.get_new_events() == []
    finally:
        w.stop()


def test_signed_file_urls_need_no_other_credential(sbx):
    up = sbx.upload_url("signed/in.txt", ttl=60)
    r = httpx.post(up, content=b"uploaded", headers={"content-type": "application/octet-stream"})
    assert r.status_code == 200, r.text
    down = sbx.download_url("signed/in.txt")
    assert httpx.get(down).content == b"uploaded"
    other = down.replace("path=signed/in.txt", "path=signed/other.txt")
    assert other != down and httpx.get(other).status_code == 403
    # A write URL for a path with spaces and non-ASCII names works too.
    odd = sbx.upload_url("signed/a b/ü.txt")
    assert httpx.post(odd, content=b"odd", headers={"content-type": "application/octet-stream"}).status_code == 200
    assert sbx.files.read("signed/a b/ü.txt") == "odd"


def test_pty_by_pid_and_get_host(sbx):
    out = []
    p = sbx.pty.create(cols=90, rows=20, user="user", timeout=30, on_data=out.append,
                       cmd=["bash", "-c", "read x; stty size; echo got $x; whoami"])
    sbx.pty.resize(p.pid, 120, 33)
    sbx.pty.send_stdin(p.pid, "hi\n")
    again = sbx.pty.connect(p.pid)
    assert p.wait(timeout=30).exit_code == 0
    screen = b"".join(out)
    assert b"33 120" in screen and b"got hi" in screen and b"user" in screen
    assert b"got hi" in again.wait(timeout=30).stdout.encode()
    long = sbx.pty.create(cmd=["sleep", "60"])
    sbx.pty.kill(long.pid)
    with pytest.raises(errors.CommandExitError):
        long.wait(timeout=30)
    url = sbx.get_host(3000)
    assert url.startswith("http") and "token=" in url and sbx.sandbox_id in url


def test_async_surface():
    async def main():
        run = uuid.uuid4().hex[:8]
        s = await AsyncSandbox.create(metadata={"run": run}, memory_mib=128)
        try:
            assert [i.sandbox_id for i in (await AsyncSandbox.list(metadata={"run": run}))[0]] == [s.sandbox_id]
            assert (await s.get_info()).metadata == {"run": run}
            with pytest.raises(errors.CommandExitError):
                await s.commands.run("exit 2")
            h = await s.commands.run("sleep 0.5; echo later", background=True)
            await h.disconnect()
            assert (await (await s.commands.connect(h.pid)).wait(timeout=30)).stdout == "later\n"
            await s.files.write_files([WriteEntry("w/a.txt", "a")])
            w = await s.files.watch_dir("w")
            await s.files.write("w/b.txt", "b")
            for _ in range(50):
                if any(e.path.endswith("/b.txt") for e in w.get_new_events()):
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("no event for w/b.txt")
            await w.stop()
            assert b"".join([c async for c in await s.files.read("w/a.txt", format="stream")]) == b"a"
            assert (await s.get_metrics())[0].mem_total == 128 << 20
            async with httpx.AsyncClient() as c:
                r = await c.post(await s.upload_url("u.txt"), content=b"u",
                                 headers={"content-type": "application/octet-stream"})
                assert r.status_code == 200
                assert (await c.get(await s.download_url("u.txt"))).content == b"u"
            await s.pause()
            again = await AsyncSandbox.connect(s.sandbox_id)
            assert await again.is_running()
            out = []
            p = await s.pty.create(cmd=["sh", "-c", "read x; echo pty $x"], on_data=out.append)
            await s.pty.send_stdin(p.pid, "ok\n")
            await p.wait(timeout=30)
            assert b"pty ok" in b"".join(out)
            assert "token=" in await s.get_host(8080)
        finally:
            assert await AsyncSandbox.kill(s.sandbox_id) is True

    asyncio.run(main())
