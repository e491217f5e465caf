"""The Python SDK against a live `talon up` (TALON_URL and TALON_API_KEY
point at it; scripts/test.sh starts one)."""

import asyncio
import os

import pytest

from talon_sandbox import AsyncSandbox, Sandbox, errors

pytestmark = pytest.mark.skipif(
    not os.environ.get("TALON_API_KEY"), reason="needs a live server: TALON_URL and TALON_API_KEY"
)


@pytest.fixture(scope="module")
def sbx():
    with Sandbox.create(memory_mib=256) as s:
        yield s


def test_create_waits_until_running(sbx):
    assert sbx.sandbox_id.startswith("sbx_")
    assert sbx.state == "running"
    assert sbx.sandbox_id in [s.sandbox_id for s in Sandbox.list(page_size=500)[0]]


def test_run_gives_stdout_stderr_and_exit_code(sbx):
    r = sbx.commands.run("echo hi; echo err >&2")
    assert (r.stdout, r.stderr, r.exit_code) == ("hi\n", "err\n", 0)
    # A non-zero exit raises, with the result attached.
    with pytest.raises(errors.CommandExitError) as e:
        sbx.commands.run("echo hi; echo err >&2; exit 3")
    assert (e.value.stdout, e.value.stderr, e.value.exit_code) == ("hi\n", "err\n", 3)
    assert e.value.result.exit_code == 3


def test_env_cwd_unicode_and_callbacks(sbx):
    seen = []
    r = sbx.commands.run("echo $GREETING; pwd; echo ünïcødé ✓", envs={"GREETING": "hallo"}, cwd="/tmp",
                         on_stdout=seen.append)
    assert r.stdout == "hallo\n/tmp\nünïcødé ✓\n"
    assert "".join(seen) == r.stdout


def test_stdin_and_timeout(sbx):
    assert sbx.commands.run(["cat"], stdin="ping\n").stdout == "ping\n"
    with pytest.raises(errors.CommandTimeoutError) as e:
        sbx.commands.run("echo before; sleep 30", timeout=1)
    assert e.value.result.timed_out and e.value.result.stdout == "before\n"
    assert isinstance(e.value, errors.TimeoutError)


def test_background_and_reattach_by_tag(sbx):
    h = sbx.commands.run("for i in 1 2 3; do echo $i; sleep 0.1; done", background=True, tag="count")
    assert h.pid > 0
    again = sbx.commands.connect(tag="count").wait(timeout=30)
    assert again.stdout == "1\n2\n3\n"
    assert h.wait(timeout=30).exit_code == 0


def test_kill_a_background_process(sbx):
    h = sbx.commands.run("sleep 60", background=True)
    h.kill()
    with pytest.raises(errors.CommandExitError) as e:
        h.wait(timeout=30)
    assert e.value.result.signal == 9


def test_large_output_comes_back_whole(sbx):
    r = sbx.commands.run("seq 1 20000")
    assert r.stdout == "".join(f"{i}\n" for i in range(1, 20001))


def test_files(sbx):
    data = bytes(range(256)) * 4096
    info = sbx.files.write("bin/data.bin", data)
    assert info.size == len(data)
    assert sbx.files.read("bin/data.bin", format="bytes") == data
    assert [f.name for f in sbx.files.list("bin")] == ["data.bin"]
    sbx.files.rename("bin/data.bin", "bin/moved.bin")
    assert not sbx.files.exists("bin/data.bin") and sbx.files.stat("bin/moved.bin").size == len(data)
    sbx.files.make_dir("made/deep")
    assert sbx.files.stat("made/deep").is_dir
    sbx.files.remove("bin", recursive=True)
    with pytest.raises(errors.NotFoundError):
        sbx.files.read("bin/moved.bin")
    with pytest.raises(errors.PermissionDeniedError):
        sbx.files.read("../../etc/passwd")


def test_pty(sbx):
    out = []
    p = sbx.pty.create(cols=100, rows=40, cmd=["sh"], on_data=out.append)
    p.send_stdin("stty size; echo $((6*7)); exit\n")
    assert p.wait(timeout=30).exit_code == 0
    screen = b"".join(out)
    assert b"40 100" in screen and b"42" in screen


def test_errors_are_typed():
    with pytest.raises(errors.NotFoundError):
        Sandbox.connect("sbx_doesnotexist")
    with pytest.raises(errors.AuthenticationError):
        Sandbox.list(api_key="tln_invalid0_xxxxxxxxxxxxxxxxxxxxxxxxxxxx")


def test_several_servers_one_gone():
    # Several servers of one platform: the first is gone (nothing listens
    # on port 9), so calls go to the next, and stay there.
    live = os.environ.get("TALON_URL", "http://127.0.0.1:8080")
    both = f"http://127.0.0.1:9,{live}/"
    s = Sandbox.create(memory_mib=128, base_url=both)
    try:
        assert s.commands.run("echo via-next").stdout == "via-next\n"
        assert s.sandbox_id in [x.sandbox_id for x in Sandbox.list(page_size=500, base_url=both)[0]]
    finally:
        s.kill()

    async def go():
        a = await AsyncSandbox.create(memory_mib=128, base_url=both)
        try:
            assert (await a.commands.run("echo async")).stdout == "async\n"
        finally:
            await a.kill()

    asyncio.run(go())
    # Every server gone: the SDK's own error, naming the last it tried.
    with pytest.raises(errors.UnavailableError, match="127.0.0.1:10"):
        Sandbox.list(base_url="http://127.0.0.1:9,http://127.0.0.1:10")
    with pytest.raises(errors.InvalidArgumentError):
        Sandbox.list(base_url=f"{live},")


def test_pause_resume_kill():
    s = Sandbox.create(memory_mib=128)
    s.pause()
    assert s.state == "paused"
    s.resume()
    assert s.commands.run("true").exit_code == 0
    s.kill()
    assert s.state == "deleted"
    with pytest.raises(errors.FailedPreconditionError):
        s.commands.run("true")


def test_snapshot_create_from_it_and_fork():
    src = Sandbox.create(memory_mib=128)
    try:
        src.files.write("/workspace/state.txt", "kept")
        src.commands.run("echo mine > /home/user/note", user="user")
        snap = src.create_snapshot()
        assert snap.snapshot_id.startswith("snp_") and snap.sandbox_id == src.sandbox_id
        assert snap.snapshot_id in [x.snapshot_id for x in Sandbox.list_snapshots(sandbox_id=src.sandbox_id)[0]]
        with pytest.raises(errors.AlreadyExistsError):
            src.create_snapshot(snap.name)
        with Sandbox.create(snapshot_id=snap.snapshot_id, memory_mib=128) as again:
            assert again.info().snapshot_id == snap.snapshot_id
            assert again.files.read("/workspace/state.txt") == "kept"
            assert again.commands.run("cat /home/user/note").stdout == "mine\n"
        forks = src.fork(2)
        try:
            assert len({f.sandbox_id for f in forks} | {src.sandbox_id}) == 3
            forks[0].files.write("/workspace/state.txt", "changed")
            assert forks[1].files.read("/workspace/state.txt") == "kept"
            assert src.files.read("/workspace/state.txt") == "kept"
        finally:
            for f in forks:
                f.kill()
        Sandbox.delete_snapshot(snap.snapshot_id)
        with pytest.raises(errors.NotFoundError):
            Sandbox.get_snapshot(snap.snapshot_id)
        with pytest.raises(errors.InvalidArgumentError):
            src.fork(21)
    finally:
        src.kill()


def test_async():
    async def main():
        async with await AsyncSandbox.create(memory_mib=128) as s:
            r = await s.commands.run("echo async")
            assert (r.stdout, r.exit_code) == ("async\n", 0)
            await s.files.write("a.txt", "x")
            assert await s.files.read("a.txt") == "x"
            h = await s.commands.run("sleep 0.2; echo bg", background=True, tag="abg")
            assert (await h.wait(timeout=30)).stdout == "bg\n"
            with pytest.raises(errors.NotFoundError):
                await s.files.stat("nope")

    asyncio.run(main())


def test_watch_sees_writes(sbx):
    import time

    sbx.files.make_dir("watched")
    seen = []
    h = sbx.files.watch("watched", seen.append)
    try:
        sbx.files.write("watched/a.txt", "x")
        for _ in range(50):
            if any(e.path.endswith("/a.txt") and e.type == "write" for e in seen):
                break
            time.sleep(0.1)
        assert any(e.path.endswith("/a.txt") and e.type == "write" for e in seen), seen
        assert not any(".talon-write-" in e.path for e in seen), seen
    finally:
        h.stop()


def test_preview_url_is_a_signed_link_any_client_opens(sbx):
    import http.cookiejar
    import urllib.error
    import urllib.parse
    import urllib.request

    sbx.files.write("site/index.html", "<h1>previewed</h1>")
    sbx.commands.run("cd /workspace/site && python3 -m http.server 8126 >/dev/null 2>&1", background=True)
    sbx.commands.run("for i in $(seq 1 100); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 8126))' 2>/dev/null && exit 0; sleep 0.05; done; exit 1")
    # The default form is the one browsers need for root-absolute assets
    # (a subdomain on loopback), with a token.
    url = sbx.preview_url(8126)
    assert "token=" in url, url
    if urllib.parse.urlsplit(os.environ["TALON_URL"]).hostname in ("127.0.0.1", "localhost"):
        assert f"-{sbx.sandbox_id}.localhost:" in url, url
    # The path form, followed by a plain HTTP client on a plain-http
    # gateway: served at once, no credential but the link.
    link = sbx.preview_url(8126, path=True)
    assert urllib.request.urlopen(link, timeout=30).read() == b"<h1>previewed</h1>"
    # A client that says it is a browser is sent to the clean URL with a
    # cookie it can send back over http (not only the Secure one).
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    req = urllib.request.Request(link, headers={"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"})
    with opener.open(req, timeout=30) as r:
        assert r.read() == b"<h1>previewed</h1>"
        assert "token=" not in r.geturl()
    assert any(c.name.startswith("talon-preview-") and not c.secure for c in jar)
    # The bare address needs a credential.
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(sbx.preview_address(8126), timeout=30)
    assert e.value.code == 401


def test_isolation_gvisor_runs_under_its_own_kernel():
    # The platform under test offers gvisor (CI installs runsc).
    with Sandbox.create(isolation="gvisor", memory_mib=128) as s:
        assert s.info().isolation == "gvisor"
        assert "gvisor" in s.commands.run("cat /proc/version").stdout
        s.files.write("/workspace/f.txt", "under gVisor")
        assert s.files.read("/workspace/f.txt") == "under gVisor"
    with pytest.raises(errors.InvalidArgumentError):
        Sandbox.create(isolation="vm")
