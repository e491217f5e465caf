"""The unmodified `e2b_code_interpreter` Python SDK (pinned in
scripts/test.sh) against Talon's E2B sandbox listener, port 49999:
`run_code` keeps state, streams output, returns results and errors;
contexts of each language are created, listed, restarted and removed;
a request without the sandbox's token is refused."""

import os
import subprocess

import httpx
import pytest

ci = pytest.importorskip("e2b_code_interpreter")
from e2b_code_interpreter import Sandbox  # noqa: E402

pytestmark = pytest.mark.skipif(
    not (os.environ.get("E2B_API_URL") and os.environ.get("E2B_SANDBOX_URL") and os.environ.get("E2B_API_KEY")),
    reason="needs Talon's E2B API: E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY",
)


def _ipykernel() -> bool:
    ok = subprocess.run(["/usr/bin/python3", "-c", "import ipykernel, matplotlib"],
                        capture_output=True).returncode == 0
    if not ok and os.environ.get("CI"):
        raise AssertionError("CI installs python3-ipykernel and python3-matplotlib")
    return ok


@pytest.fixture(scope="module")
def sbx():
    s = Sandbox.create(timeout=300, metadata={"suite": "code-interpreter"})
    yield s
    s.kill()


def test_run_code_python_state_output_results_and_errors(sbx):
    if not _ipykernel():
        pytest.skip("no ipykernel on this host")
    out = []
    x = sbx.run_code("n = 20\nprint('hello')\nn + 22", on_stdout=lambda m: out.append(m.line))
    assert x.text == "42" and x.logs.stdout == ["hello\n"] and out == ["hello\n"], x
    assert x.execution_count == 1
    assert sbx.run_code("n * 2").text == "40"
    # envs: this run's only; the kernel's state carries on.
    x = sbx.run_code("import os\nprint(os.environ['RUN_ONLY'], n)", envs={"RUN_ONLY": "yes"})
    assert x.logs.stdout == ["yes 20\n"], x
    x = sbx.run_code("print(os.environ.get('RUN_ONLY', 'unset'))")
    assert x.logs.stdout == ["unset\n"], x
    x = sbx.run_code("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()")
    assert any(r.png for r in x.results), x
    x = sbx.run_code("{'a': 1}")
    assert x.results[0].json == {"a": 1} or x.text == "{'a': 1}"
    x = sbx.run_code("raise ValueError('bad')")
    assert x.error.name == "ValueError" and x.error.value == "bad" and "ValueError" in x.error.traceback


def test_contexts_of_each_language(sbx):
    js = sbx.create_code_context(language="javascript")
    assert js.language == "javascript" and js.cwd == "/home/user"
    assert sbx.run_code("const k = 5; k * 2", context=js).text == "10"
    assert sbx.run_code("k + 1", context=js).text == "6"
    x = sbx.run_code("console.log(process.env.RUN_ONLY)", context=js, envs={"RUN_ONLY": "js"})
    assert x.logs.stdout == ["js\n"], x
    sh = sbx.create_code_context(language="bash", cwd="/tmp")
    x = sbx.run_code("echo $PWD", context=sh)
    assert x.logs.stdout == ["/tmp\n"]
    x = sbx.run_code('echo "${RUN_ONLY-unset}"', context=sh, envs={"RUN_ONLY": "sh"})
    assert x.logs.stdout == ["sh\n"], x
    assert sbx.run_code('echo "${RUN_ONLY-unset}"', context=sh).logs.stdout == ["unset\n"]
    assert {c.id for c in sbx.list_code_contexts()} >= {js.id, sh.id}
    sbx.restart_code_context(js)
    assert sbx.run_code("typeof k", context=js).text == "'undefined'"
    sbx.remove_code_context(sh)
    assert sh.id not in {c.id for c in sbx.list_code_contexts()}
    with pytest.raises(Exception):
        sbx.run_code("1", language="cobol")


def test_the_code_port_needs_the_sandbox_token(sbx):
    url = os.environ["E2B_SANDBOX_URL"].rstrip("/")
    h = {"E2b-Sandbox-Id": sbx.sandbox_id, "E2b-Sandbox-Port": "49999"}
    r = httpx.post(f"{url}/execute", json={"code": "1"}, headers=h)
    assert r.status_code == 401
    r = httpx.get(f"{url}/contexts", headers={**h, "E2B-Traffic-Access-Token": "forged"})
    assert r.status_code in (401, 403)
    other = Sandbox.create(timeout=120)
    try:
        # Another sandbox's token does not open this one: to it, this
        # sandbox is not there (E2B's 502 "not found").
        r = httpx.get(f"{url}/contexts", headers={**h, "X-Access-Token": other._envd_access_token})
        assert r.status_code in (401, 403, 404, 502) and "not found" in r.text.lower(), r.text
    finally:
        other.kill()
