"""The unmodified `e2b` Python SDK (pinned in scripts/test.sh) against
Talon's E2B sandbox data plane (envd's services on `E2B_SANDBOX_URL`):
commands, files, watchers, PTY, signed file URLs, and the access token
that guards them."""

import base64
import json
import os
import subprocess
import tempfile
import time
import uuid

import httpx
import pytest

e2b = pytest.importorskip("e2b")
from e2b import Sandbox  # noqa: E402
from e2b.sandbox.commands.command_handle import CommandExitException  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (os.environ.get("E2B_API_URL") and os.environ.get("E2B_SANDBOX_URL") and os.environ.get("E2B_API_KEY")),
    reason="needs Talon's E2B API: E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY",
)

ENVD = os.environ.get("E2B_SANDBOX_URL", "")


@pytest.fixture(scope="module")
def sbx():
    s = Sandbox.create(timeout=300, metadata={"suite": "data-plane"}, envs={"GREETING": "hi"})
    yield s
    s.kill()


def test_commands_run_output_env_cwd_user(sbx):
    out, err = [], []
    r = sbx.commands.run(
        'echo "$GREETING $EXTRA"; echo oops >&2; pwd; id -un',
        envs={"EXTRA": "there"},
        on_stdout=out.append,
        on_stderr=err.append,
    )
    assert r.exit_code == 0
    assert r.stdout == "hi there\n/home/user\nuser\n"
    assert r.stderr == "oops\n"
    assert "".join(out) == r.stdout and "".join(err) == r.stderr
    r = sbx.commands.run("pwd; id -un", cwd="/tmp", user="root")
    assert r.stdout == "/tmp\nroot\n"


def test_a_failing_command_raises(sbx):
    with pytest.raises(CommandExitException) as e:
        sbx.commands.run("echo bad >&2; exit 7")
    assert e.value.exit_code == 7
    assert e.value.stderr == "bad\n"


def test_a_command_past_its_timeout_is_stopped(sbx):
    t = time.monotonic()
    with pytest.raises(e2b.TimeoutException):
        sbx.commands.run("sleep 30", timeout=2)
    assert time.monotonic() - t < 20


def test_background_list_connect_stdin_kill(sbx):
    h = sbx.commands.run("read line; echo got:$line; sleep 600", background=True, stdin=True)
    try:
        pids = [p.pid for p in sbx.commands.list()]
        assert h.pid in pids
        sbx.commands.send_stdin(h.pid, "ping\n")
        again = sbx.commands.connect(h.pid)
        deadline = time.monotonic() + 20
        seen = []
        for stdout, _, _ in again:
            if stdout:
                seen.append(stdout)
            if "got:ping" in "".join(seen) or time.monotonic() > deadline:
                break
        assert "got:ping" in "".join(seen)
    finally:
        assert sbx.commands.kill(h.pid) is True
    with pytest.raises(CommandExitException):
        h.wait()
    assert h.pid not in [p.pid for p in sbx.commands.list()]
    assert sbx.commands.kill(h.pid) is False


def test_files_read_write_list_and_friends(sbx):
    d = f"dp-{uuid.uuid4().hex[:6]}"
    info = sbx.files.write(f"{d}/a.txt", "alpha")
    assert info.path == f"/home/user/{d}/a.txt"
    assert sbx.files.read(f"{d}/a.txt") == "alpha"
    blob = bytes(range(256)) * 1000
    sbx.files.write(f"/tmp/{d}.bin", blob)
    assert sbx.files.read(f"/tmp/{d}.bin", format="bytes") == blob
    sbx.files.write_files([
        {"path": f"{d}/sub/b.txt", "data": "beta"},
        {"path": f"{d}/sub/deeper/c.txt", "data": b"gamma"},
    ])
    top = {e.name for e in sbx.files.list(d)}
    assert top == {"a.txt", "sub"}
    deep = {e.path for e in sbx.files.list(d, depth=3)}
    assert f"/home/user/{d}/sub/deeper/c.txt" in deep
    assert sbx.files.exists(f"{d}/a.txt") and not sbx.files.exists(f"{d}/nope")
    assert sbx.files.make_dir(f"{d}/new/dir") is True
    assert sbx.files.make_dir(f"{d}/new/dir") is False
    moved = sbx.files.rename(f"{d}/a.txt", f"{d}/moved.txt")
    assert moved.name == "moved.txt"
    got = sbx.files.get_info(f"{d}/moved.txt")
    assert got.size == 5 and got.owner == "user" and got.permissions.startswith("-rw")
    sbx.files.remove(f"{d}/sub")
    assert not sbx.files.exists(f"{d}/sub/b.txt")
    with pytest.raises(e2b.NotFoundException):
        sbx.files.read(f"{d}/sub/b.txt")


def test_watch_dir_polling(sbx):
    d = f"/home/user/w-{uuid.uuid4().hex[:6]}"
    sbx.files.make_dir(d)
    w = sbx.files.watch_dir(d)
    try:
        sbx.files.write(f"{d}/x.txt", "1")
        names = set()
        deadline = time.monotonic() + 15
        while "x.txt" not in names and time.monotonic() < deadline:
            names |= {ev.name for ev in w.get_new_events()}
            time.sleep(0.3)
        assert "x.txt" in names
    finally:
        w.stop()


def test_pty_create_input_resize_kill(sbx):
    import threading

    from e2b import PtySize

    out = bytearray()
    h = sbx.pty.create(PtySize(rows=24, cols=80), timeout=60)

    def drain():
        try:
            h.wait(on_pty=out.extend)
        except Exception:
            pass

    threading.Thread(target=drain, daemon=True).start()
    try:
        sbx.pty.resize(h.pid, PtySize(rows=40, cols=100))
        sbx.pty.send_stdin(h.pid, b"stty size; echo pty-$((6*7))\n")
        deadline = time.monotonic() + 15
        while b"pty-42" not in out and time.monotonic() < deadline:
            time.sleep(0.2)
        assert b"pty-42" in out and b"40 100" in out
    finally:
        assert sbx.pty.kill(h.pid) is True


def test_signed_file_urls(sbx):
    # The URLs are used as the SDK makes them, by clients that know
    # nothing of the sandbox: no routing header, no token. With
    # E2B_SANDBOX_URL they name no sandbox; the signature does.
    path = f"/home/user/signed-{uuid.uuid4().hex[:6]}.txt"
    up = sbx.upload_url(path, use_signature_expiration=120)
    r = httpx.post(up, files={"file": ("ignored", b"signed upload")})
    assert r.status_code == 200, r.text
    down = sbx.download_url(path, use_signature_expiration=120)
    r = httpx.get(down)
    assert r.status_code == 200 and r.content == b"signed upload"
    # curl, as a user would.
    got = subprocess.run(["curl", "-sf", down], capture_output=True, timeout=60)
    assert got.returncode == 0 and got.stdout == b"signed upload", got
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"by curl")
        f.flush()
        sent = subprocess.run(["curl", "-sf", "-F", f"file=@{f.name}", up], capture_output=True, timeout=60)
    assert sent.returncode == 0, sent
    assert sbx.files.read(path) == "by curl"
    # The signature covers the path and the operation, with the routing
    # header or without it.
    other = down.replace(path.split("/")[-1], "other.txt")
    assert httpx.get(other).status_code == 403
    assert httpx.get(other, headers={"E2b-Sandbox-Id": sbx.sandbox_id}).status_code == 403
    # A write signature does not read; an expired one opens nothing.
    assert httpx.get(up).status_code == 403
    assert httpx.get(sbx.download_url(path, use_signature_expiration=-10)).status_code == 401
    # With the routing header, as before.
    assert httpx.get(down, headers={"E2b-Sandbox-Id": sbx.sandbox_id}).status_code == 200


def test_pause_and_connect_resume_then_run(sbx):
    s = Sandbox.create(timeout=120)
    try:
        s.files.write("kept.txt", "still here")
        assert s.pause() is True
        back = Sandbox.connect(s.sandbox_id)
        assert back.commands.run("cat kept.txt").stdout == "still here"
    finally:
        s.kill()


def rpc(sandbox_id, token, path="/process.Process/List", body=b"{}"):
    headers = {
        "E2b-Sandbox-Id": sandbox_id,
        "Content-Type": "application/json",
        "Connect-Protocol-Version": "1",
    }
    if token is not None:
        headers["X-Access-Token"] = token
    return httpx.post(ENVD + path, content=body, headers=headers)


def token_of(s):
    # What the SDK holds and sends as X-Access-Token.
    return s._envd_access_token


def test_the_data_plane_needs_this_sandboxs_token(sbx):
    other = Sandbox.create(timeout=120)
    try:
        assert rpc(sbx.sandbox_id, token_of(sbx)).status_code == 200
        for token in (None, "", "tsb_forged", token_of(sbx)[:-2] + "xx"):
            r = rpc(sbx.sandbox_id, token)
            assert r.status_code == 401, (token, r.text)
            assert r.json()["code"] == "unauthenticated"
        # Another sandbox's token does not open this one (it is not found).
        r = rpc(sbx.sandbox_id, token_of(other))
        assert r.status_code == 404, r.text
        r = httpx.get(ENVD + "/files", params={"path": "/etc/hostname"},
                      headers={"E2b-Sandbox-Id": sbx.sandbox_id, "X-Access-Token": token_of(other)})
        assert r.status_code == 404
        # A token opens the data plane only: not the control plane.
        api = os.environ["E2B_API_URL"]
        r = httpx.delete(f"{api}/sandboxes/{sbx.sandbox_id}", headers={"X-API-KEY": token_of(sbx)})
        assert r.status_code in (401, 403)
        assert Sandbox.get_info(sbx.sandbox_id).state.value == "running"
    finally:
        other.kill()


def test_another_tenant_cannot_reach_a_sandbox_through_the_data_plane(sbx):
    alt = os.environ.get("E2B_ALT_API_KEY")
    if not alt:
        pytest.skip("needs E2B_ALT_API_KEY")
    mine = Sandbox.create(timeout=120, api_key=alt)
    try:
        # Tenant B's sandbox token is refused for tenant A's sandbox.
        assert rpc(sbx.sandbox_id, token_of(mine)).status_code == 404
        with pytest.raises(e2b.NotFoundException):
            Sandbox.connect(sbx.sandbox_id, api_key=alt)
    finally:
        mine.kill()


def test_a_deleted_sandbox_reads_as_not_running():
    s = Sandbox.create(timeout=120)
    token = token_of(s)
    s.kill()
    r = rpc(s.sandbox_id, token)
    assert r.status_code == 503 and "was not found" in r.json()["message"], r.text
    r = httpx.get(ENVD + "/health", headers={"E2b-Sandbox-Id": s.sandbox_id, "X-Access-Token": token})
    assert r.status_code == 502 and "was not found" in r.json()["message"]


def test_connect_protocol_errors_are_connects():
    r = httpx.post(ENVD + "/process.Process/List", content=b"{}",
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert json.loads(r.text)["code"] == "invalid_argument"


def test_async_watch_dir_streams_and_octet_stream_uploads(sbx):
    import asyncio

    from e2b import AsyncSandbox

    async def main():
        s = await AsyncSandbox.connect(sbx.sandbox_id)
        d = f"/home/user/aw-{uuid.uuid4().hex[:6]}"
        await s.files.make_dir(d)
        names = set()
        w = await s.files.watch_dir(d, on_event=lambda ev: names.add(ev.name))
        try:
            await s.files.write(f"{d}/y.txt", "2")
            for _ in range(75):
                if "y.txt" in names:
                    break
                await asyncio.sleep(0.2)
        finally:
            await w.stop()
        assert "y.txt" in names
        assert await s.files.read(f"{d}/y.txt") == "2"

    asyncio.run(main())
    # A raw octet-stream upload, gzip-encoded, as envd ≥ 0.5.7 takes it.
    import gzip

    r = httpx.post(ENVD + "/files", params={"path": "gz.txt"}, content=gzip.compress(b"zipped"),
                   headers={"E2b-Sandbox-Id": sbx.sandbox_id, "X-Access-Token": token_of(sbx),
                            "Content-Type": "application/octet-stream", "Content-Encoding": "gzip"})
    assert r.status_code == 200, r.text
    assert r.json()[0]["path"] == "/home/user/gz.txt"
    r = httpx.get(ENVD + "/files", params={"path": "gz.txt"},
                  headers={"E2b-Sandbox-Id": sbx.sandbox_id, "X-Access-Token": token_of(sbx), "Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.content == b"zipped"


def test_get_host_reaches_a_server_in_the_sandbox(sbx):
    sbx.files.write("/tmp/www/index.html", "served from the sandbox")
    sbx.commands.run("cd /tmp/www && python3 -m http.server 8000 --bind 127.0.0.1", background=True)
    host = sbx.get_host(8000)
    port, sid = host.split(".")[0].split("-", 1)
    assert (port, sid) == ("8000", sbx.sandbox_id)
    headers = {"E2b-Sandbox-Id": sbx.sandbox_id, "E2b-Sandbox-Port": port}
    body = None
    for _ in range(50):
        r = httpx.get(ENVD + "/index.html", headers={**headers, "X-Access-Token": token_of(sbx)})
        if r.status_code == 200:
            body = r.text
            break
        time.sleep(0.2)
    assert body == "served from the sandbox"
    # No token, no port: Talon serves no sandbox port publicly.
    assert httpx.get(ENVD + "/index.html", headers=headers).status_code == 401
    # E2B's traffic header carries the same token.
    r = httpx.get(ENVD + "/index.html", headers={**headers, "e2b-traffic-access-token": token_of(sbx)})
    assert r.status_code == 200
    # A port nothing listens on.
    r = httpx.get(ENVD + "/", headers={**headers, "E2b-Sandbox-Port": "8001", "X-Access-Token": token_of(sbx)})
    assert r.status_code == 502


def test_a_viewers_key_can_neither_create_nor_exec(sbx):
    base, admin = os.environ.get("TALON_URL"), os.environ.get("TALON_API_KEY")
    if not (base and admin):
        pytest.skip("needs TALON_URL and TALON_API_KEY to make a viewer's key")
    r = httpx.post(f"{base}/v1/tenants/-/api-keys", headers={"authorization": f"Bearer {admin}"},
                   json={"name": f"viewer-{uuid.uuid4().hex[:6]}", "role": "ROLE_VIEWER"})
    r.raise_for_status()
    # Written as e2b_ + hex, which every SDK version takes (and the facade reads back).
    viewer = "e2b_" + r.json()["secret"].encode().hex()
    with pytest.raises(e2b.SandboxException) as e:
        Sandbox.create(timeout=60, api_key=viewer)
    assert "403" in str(e.value) or "may not" in str(e.value)
    # It may look (the control plane's reads are the viewer's), but it
    # gets no access token: connecting, where it does not have to extend
    # the timeout, gives a handle whose data-plane calls are refused.
    assert Sandbox.get_info(sbx.sandbox_id, api_key=viewer).sandbox_id == sbx.sandbox_id
    try:
        handle = Sandbox.connect(sbx.sandbox_id, api_key=viewer)
    except e2b.SandboxException:
        return
    with pytest.raises(Exception) as e:
        handle.commands.run("true")
    assert "X-Access-Token" in str(e.value) or "unauthenticated" in str(e.value).lower()


def test_stream_input_and_close_stdin(sbx):
    h = sbx.commands.run("cat", background=True, stdin=True)
    if hasattr(sbx.commands, "stream_input"):
        sbx.commands.stream_input(h.pid, ["streamed ", b"input\n"])
    else:
        sbx.commands.send_stdin(h.pid, "streamed input\n")
    sbx.commands.close_stdin(h.pid)
    assert h.wait().stdout == "streamed input\n"


def test_connect_over_http2_and_health(sbx):
    import struct

    h = {"E2b-Sandbox-Id": sbx.sandbox_id, "X-Access-Token": token_of(sbx)}
    assert httpx.get(ENVD + "/health", headers=h).status_code == 204
    # h2c with prior knowledge: a unary call and a server stream, framed
    # by Connect's envelopes, ending with the end-of-stream envelope.
    with httpx.Client(http1=False, http2=True) as c:
        r = c.post(ENVD + "/process.Process/List", content=b"{}",
                   headers={**h, "Content-Type": "application/json"})
        assert r.http_version == "HTTP/2" and r.status_code == 200, r.text
        body = json.dumps({"process": {"cmd": "/bin/echo", "args": ["over", "h2"]}}).encode()
        r = c.post(ENVD + "/process.Process/Start", content=struct.pack(">BI", 0, len(body)) + body,
                   headers={**h, "Content-Type": "application/connect+json", "Keepalive-Ping-Interval": "1"})
        assert r.http_version == "HTTP/2" and r.status_code == 200
    frames, raw = [], r.content
    while raw:
        flags, n = struct.unpack(">BI", raw[:5])
        frames.append((flags, json.loads(raw[5:5 + n])))
        raw = raw[5 + n:]
    events = [f[1]["event"] for f in frames if f[0] == 0]
    assert "start" in events[0] and "end" in events[-1]
    out = b"".join(base64.b64decode(e["data"]["stdout"]) for e in events if "data" in e)
    assert out == b"over h2\n"
    assert frames[-1] == (2, {})


@pytest.mark.skipif(not hasattr(Sandbox, "create_snapshot"), reason="this e2b SDK has no snapshots")
def test_snapshot_create_from_it_fork_list_delete(sbx):
    sbx.files.write("/home/user/snap.txt", "kept")
    # Talon snapshots the filesystem (E2B's mode="filesystem"); a memory
    # snapshot is refused, saying why.
    info = sbx.create_snapshot()
    assert info.snapshot_id.startswith("snp_") and len(info.names) == 1
    r = httpx.post(
        f"{os.environ['E2B_API_URL']}/sandboxes/{sbx.sandbox_id}/snapshots",
        headers={"X-API-KEY": os.environ["E2B_API_KEY"]},
        json={"memory": True},  # mode="full" in the SDKs that have modes
    )
    assert r.status_code == 409 and "CRIU" in r.json()["message"], r.text
    listed = Sandbox.list_snapshots(sandbox_id=sbx.sandbox_id).next_items()
    assert info.snapshot_id in [s.snapshot_id for s in listed]
    again = Sandbox.create(info.snapshot_id, timeout=120)
    try:
        assert again.files.read("/home/user/snap.txt") == "kept"
    finally:
        again.kill()
    forks = sbx.fork(count=2, timeout=120)
    try:
        assert len(forks) == 2 and all(isinstance(f, Sandbox) for f in forks)
        forks[0].files.write("/home/user/snap.txt", "changed")
        assert forks[1].files.read("/home/user/snap.txt") == "kept"
        assert sbx.files.read("/home/user/snap.txt") == "kept"
    finally:
        for f in forks:
            if isinstance(f, Sandbox):
                f.kill()
    assert Sandbox.delete_snapshot(info.snapshot_id) is True
    assert Sandbox.delete_snapshot(info.snapshot_id) is False


def test_polling_watchers_are_bounded_per_sandbox_tenant_and_bytes(sbx):
    # Unread events live in the control plane: a watcher keeps at most
    # 256 KiB of them (the newest), a sandbox 16 watchers, a tenant 64;
    # another tenant still gets one (issue 30: 20 unpolled watchers took
    # the process to 1 GiB, and one tenant could take all 1,024 slots).
    d = f"/home/user/wb-{uuid.uuid4().hex[:6]}"
    sbx.files.make_dir(d)
    w = sbx.files.watch_dir(d)
    long = "n" * 200
    sbx.commands.run(f"for i in $(seq 3000); do : > {d}/{long}$i; done", timeout=120)
    time.sleep(5)
    events = w.get_new_events()
    # 200-byte names and 32 bytes of overhead each: at most 1,130 kept.
    assert 0 < len(events) <= 1130, len(events)
    assert any(ev.name == f"{long}3000" for ev in events), "the newest are kept"
    w.stop()

    others = [Sandbox.create(timeout=120) for _ in range(3)]
    held = []
    try:
        for s in [sbx] + others:
            for _ in range(16):
                held.append(s.files.watch_dir("/home/user"))
        with pytest.raises(Exception, match="the tenant has 64 watchers"):
            others[0].files.watch_dir("/home/user")
        alt = os.environ.get("E2B_ALT_API_KEY")
        if alt:
            theirs = Sandbox.create(timeout=120, api_key=alt)
            try:
                theirs.files.watch_dir("/home/user").stop()
            finally:
                theirs.kill()
        for h in held[:17]:
            h.stop()
        held = held[17:]
        # The sandbox's own 17th is refused though its tenant has room.
        for _ in range(16):
            held.append(sbx.files.watch_dir("/home/user"))
        with pytest.raises(Exception, match="the sandbox has 16 watchers"):
            sbx.files.watch_dir("/home/user")
    finally:
        for h in held:
            try:
                h.stop()
            except Exception:
                pass
        for s in others:
            s.kill()
